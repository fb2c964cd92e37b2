/**
 * The durable suite's one workload, the same for every row: N payments with string keys `order-1234`
 * over 10,000 keys, a no-op async handler on 8 workers, posted in bursts of 1,000 with the durable
 * acknowledgement (`await loop.flushed()`, or the job queue's own) after each burst — plus the
 * one-post-one-acknowledgement latency mode. The tally checks that every message ran exactly once.
 *
 * @module
 */
import { BenchError } from '../lib/check.js'

/** The message map of every Flowing row. */
export interface DurableMessages {
  'order.paid': OrderPaid
}

/** One payment: its key, its place in the workload, an amount. */
export interface OrderPaid {
  readonly orderId: string
  readonly seq: number
  readonly amount: number
}

/** The sizes of one run. */
export interface DurableWorkload {
  /** Messages of one throughput run. */
  readonly n: number
  /** Posts between two acknowledgements. */
  readonly burst: number
  /** Workers (the job queue's concurrency). */
  readonly workers: number
  /** Distinct keys. */
  readonly keys: number
  /** Posts of the one-at-a-time latency mode. */
  readonly singles: number
  /**
   * What the no-op handler awaits: `turn` — one event-loop turn (`setImmediate`), as a handler doing
   * any I/O does, so every message is journaled when admitted and removed when done; `microtask` —
   * nothing, so a burst is handled within the turn it was posted in and the journal never sees it.
   */
  readonly handler: HandlerMode
}

/** What the no-op handler awaits (see {@link DurableWorkload.handler}). */
export type HandlerMode = 'turn' | 'microtask'

/** The full run's sizes, or the smoke run's. */
export function durableWorkload(smoke: boolean): DurableWorkload {
  return smoke
    ? { n: 2_000, burst: 1_000, workers: 8, keys: 10_000, singles: 100, handler: 'turn' }
    : { n: 200_000, burst: 1_000, workers: 8, keys: 10_000, singles: 2_000, handler: 'turn' }
}

/** Message `seq`'s payload (its key is its `orderId`). */
export function payment(w: DurableWorkload, seq: number): OrderPaid {
  return { orderId: `order-${seq % w.keys}`, seq, amount: (seq * 7) % 500 }
}

/** Counts every handler call by `seq`, to check that each message ran exactly once. */
export class Tally {
  readonly #seen: Uint8Array
  #calls = 0

  constructor(n: number) {
    this.#seen = new Uint8Array(n)
  }

  /** Handler calls so far. */
  get calls(): number {
    return this.#calls
  }

  /** One handler call for `seq`. */
  ran(seq: number): void {
    this.#calls++
    const seen = this.#seen
    if (seq >= 0 && seq < seen.length && seen[seq] !== 255) seen[seq] = (seen[seq] ?? 0) + 1
  }

  /**
   * @throws BenchError unless each of the first `posted` messages ran exactly once and nothing else ran
   */
  expectOnce(what: string, posted: number): void {
    const seen = this.#seen
    let missing = 0
    let twice = 0
    for (let i = 0; i < posted; i++) {
      if (seen[i] === 0) missing++
      else if ((seen[i] ?? 0) > 1) twice++
    }
    if (missing > 0 || twice > 0 || this.#calls !== posted) {
      throw new BenchError(
        `${what}: ${posted} posted, ${this.#calls} handler calls — ${missing} never ran, ${twice} ran more than once`,
      )
    }
  }
}

/** The `p` quantile (0 ≤ p ≤ 1, nearest rank) of a non-empty sample. */
export function quantile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('quantile of an empty sample')
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[rank] as number
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
