/**
 * The cases of `compare-builds`: what each one times, in words, and what share of the run's N it
 * processes. Data only, shared by both builds; the code of each case is in `cases.ts`, one copy per
 * build.
 *
 * @module
 */

/** Stable ids of the cases (`--only` matches substrings of them). */
export type CaseId =
  | 'streamed-int'
  | 'streamed-str'
  | 'burst-int'
  | 'features'
  | 'idempotent'
  | 'traces-all'
  | 'refused'
  | 'request'

/** One case of the comparison. */
export interface CaseSpec {
  readonly id: CaseId
  /** Row label. */
  readonly label: string
  /** What a run does, for the results file. */
  readonly what: string
  /** What one unit of the rate is. */
  readonly unit: 'msgs' | 'calls' | 'round trips'
  /** Units per run as a share of the run's N (`request()` round trips are slower: a tenth). */
  readonly share: number
}

/** Workers of every loop the cases build. */
export const WORKERS = 8

/** Distinct keys of the workload (as in `core-throughput`). */
export const KEY_COUNT = 10_000

/** The cases, in run order. */
export const CASES: readonly CaseSpec[] = [
  {
    id: 'streamed-int',
    label: 'streamed, integer keys',
    what: "1,000 `post('tick', i, { key, priority })` per event-loop turn, integer keys 0–9,999, priorities 0–9",
    unit: 'msgs',
    share: 1,
  },
  {
    id: 'streamed-str',
    label: "streamed, string keys ('order-1234')",
    what: 'the same with the key as a fresh string per message, `order-` and the integer key (built before the clock starts)',
    unit: 'msgs',
    share: 1,
  },
  {
    id: 'burst-int',
    label: 'burst, integer keys',
    what: 'all N posted in one synchronous loop (capacity N), then drained',
    unit: 'msgs',
    share: 1,
  },
  {
    id: 'features',
    label: 'streamed, features on',
    what: "streamed as above, with `retry: { maxAttempts: 3 }`, `groups: { concurrency: 8 }` and every post in group `'tenant-a'`, an idempotency key per post (`msg-` and the message index), a per-type rate limit of 10⁶ per 1 ms (never binds) and traces at their default",
    unit: 'msgs',
    share: 1,
  },
  {
    id: 'idempotent',
    label: 'streamed, idempotency keys',
    what: 'streamed integer keys as above, with an idempotency key per post (`msg-` and the message index, built before the clock starts) on the default in-memory ledger',
    unit: 'msgs',
    share: 1,
  },
  {
    id: 'traces-all',
    label: "streamed, traces 'all'",
    what: "streamed integer keys as above, on a loop with `traces: 'all'` (a lifecycle trace per message, the last 1,000 finished kept)",
    unit: 'msgs',
    share: 1,
  },
  {
    id: 'refused',
    label: 'tryPost refused (queue full)',
    what: "`capacity: 64`, `overflow: 'reject'`, loop paused with 64 queued; N `tryPost('tick', i)` calls, each must return status `full`",
    unit: 'calls',
    share: 1,
  },
  {
    id: 'request',
    label: 'request() round trip, one at a time',
    what: "N/10 `await loop.request('tick', i)` in sequence, the handler returning `2 × payload`; the results must sum to the expected total",
    unit: 'round trips',
    share: 0.1,
  },
]
