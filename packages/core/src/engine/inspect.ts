/**
 * `loop.inspect()`: a read-only picture of one loop — its key lanes and their holders, the running
 * handlers, the key groups, the rate limits, a key's traces — assembled on demand from what the stages
 * hold anyway. Nothing here runs per message, and nothing here writes: each stage lends an iteration
 * over its own structures (`RunQueue.lanes`, `WorkerPool.attempts`, `KeyGroups.loads`,
 * `RateLimits.loads`, `Traces.tracesOf`).
 *
 * ```
 *  queue.lanes() ─┬─ held away (Held · Backoff · Limited · Grouped · Unparked) ─▶ its trace: since, attempt
 *                 └─ no holder kept ─▶ the pool's attempt of that key (running) ─▶ startedAt, attempt
 *  ranked: most waiting first, then the longest held ─▶ the first `keys`
 * ```
 *
 * @module
 */
import { Heap } from 'heap-js'
import type { Clock } from '../contracts/clock.js'
import type { InspectOptions, KeyHolder, KeyLane, LoopInspection, RunningMessage } from '../contracts/inspection.js'
import type { MessageKey } from '../contracts/message.js'
import { InvalidArgumentError } from '../errors.js'
import type { Traces } from '../failure/trace.js'
import { type Envelope, Where } from '../internal/envelope.js'
import * as check from '../internal/validate.js'
import type { RateLimits } from '../limits/rate-limits.js'
import type { RunQueue } from '../queue/run-queue.js'

/** Lanes reported when `options.keys` is not given. */
export const DEFAULT_KEYS = 20
/** The most lanes one inspection may ask for. */
export const MAX_KEYS = 10_000

/** A running attempt, as the worker pool lists it. */
export interface RunningAttempt {
  readonly envelope: Envelope
  readonly attempt: number
  readonly startedAt: number
}

/** What an inspection reads, each where its data lives. */
export interface InspectParts {
  readonly clock: Clock
  readonly queue: Pick<RunQueue, 'busyKeys' | 'lanes' | 'groups'>
  readonly pool: { attempts(): readonly RunningAttempt[] }
  readonly limits: Pick<RateLimits, 'loads'>
  readonly traces: Pick<Traces, 'of' | 'tracesOf'>
}

// One lane before the ranking: its holder away from a worker, or its running attempt, and when it began.
interface Candidate {
  readonly key: MessageKey
  readonly away: Envelope | undefined
  readonly run: RunningAttempt | undefined
  readonly waiting: number
  readonly since: number
}

/**
 * The loop's picture now (see {@link LoopInspection}). O(busy keys + running handlers + groups +
 * budgets), plus O(`keys` × log busy keys) for the ranking and a scan of the kept traces with `traceKey` or
 * `traceId`.
 * @throws InvalidArgumentError for bad options
 */
export function inspectLoop(p: InspectParts, options: InspectOptions | undefined): LoopInspection {
  const { keys, traceKey, traceId } = readOptions(options)
  const at = p.clock.now()
  const attempts = p.pool.attempts()
  const running = attempts.map(runningOf).sort((a, b) => a.startedAt - b.startedAt)
  return {
    at,
    busyKeys: p.queue.busyKeys,
    keys: topLanes(candidates(p, attempts), keys).map((c) => laneOf(c, p.traces)),
    running,
    groups: p.queue.groups?.loads() ?? [],
    limits: p.limits.loads(at),
    traces: traceKey === undefined && traceId === undefined ? [] : p.traces.tracesOf(traceKey, 20, traceId),
  }
}

// `loop.inspect()`'s options: an object with known names only, `keys` an integer in range.
function readOptions(options: unknown): { keys: number; traceKey?: MessageKey; traceId?: string } {
  if (options === undefined) return { keys: DEFAULT_KEYS }
  const o = check.snapshotOptions('options', options)
  check.checkKnownKeys('options', o, ['keys', 'traceKey', 'traceId'])
  const keys = o['keys'] === undefined ? DEFAULT_KEYS : check.integer('options.keys', o['keys'], KEYS_RANGE)
  const traceKey = o['traceKey']
  if (traceKey !== undefined && !isKey(traceKey)) {
    throw new InvalidArgumentError('options.traceKey', 'a string or a finite number', traceKey)
  }
  const traceId = o['traceId']
  if (traceId !== undefined && (typeof traceId !== 'string' || traceId === '')) {
    throw new InvalidArgumentError('options.traceId', 'a non-empty string', traceId)
  }
  return { keys, ...(traceKey === undefined ? {} : { traceKey }), ...(traceId === undefined ? {} : { traceId }) }
}

const KEYS_RANGE = { min: 0, max: MAX_KEYS }

function isKey(value: unknown): value is MessageKey {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

// Every lane with what ranks it: a busy key's holder is the message it keeps away from a worker, or
// else the attempt of that key that runs.
function candidates(p: InspectParts, attempts: readonly RunningAttempt[]): Candidate[] {
  const runs = new Map<MessageKey, RunningAttempt>()
  for (const a of attempts) if (a.envelope.key !== undefined) runs.set(a.envelope.key, a)
  const out: Candidate[] = []
  for (const [key, away, waiting] of p.queue.lanes()) {
    if (away !== undefined) out.push({ key, away, run: undefined, waiting, since: awaySince(away, p.traces) })
    else {
      const run = runs.get(key)
      out.push({ key, away, run, waiting, since: run?.startedAt ?? Number.POSITIVE_INFINITY })
    }
  }
  return out
}

// Most waiting first, then the longest held (no holder: last); the first `limit` of them, O(n + limit × log n).
function topLanes(all: Candidate[], limit: number): Candidate[] {
  const order = (a: Candidate, b: Candidate) => b.waiting - a.waiting || a.since - b.since
  if (all.length <= limit) return all.sort(order)
  const heap = new Heap<Candidate>(order)
  heap.init(all)
  const out: Candidate[] = []
  while (out.length < limit) out.push(heap.pop() as Candidate)
  return out
}

function laneOf(c: Candidate, traces: InspectParts['traces']): KeyLane {
  let holder: KeyHolder | undefined
  if (c.away !== undefined) holder = awayHolder(c.away, c.since, traces)
  else if (c.run !== undefined) {
    const m = c.run.envelope
    holder = { id: m.id, type: m.type, state: 'running', since: c.run.startedAt, attempt: c.run.attempt }
  }
  return { key: c.key, holder, waiting: c.waiting }
}

// When a holder away from a worker entered its state: its trace's last recorded transition (a hold
// and a back-off always open one), else its entry into the queue — no time is written for this.
function awaySince(m: Envelope, traces: InspectParts['traces']): number {
  return traces.of(m)?.lastAt ?? m.postedAt
}

function awayHolder(m: Envelope, since: number, traces: InspectParts['traces']): KeyHolder {
  const state = m.where === Where.Held ? 'held' : m.where === Where.Backoff ? 'retrying' : 'rate-limited'
  const attempt = (traces.of(m)?.attemptCount ?? 0) + 1 // the one it makes next
  return { id: m.id, type: m.type, state, since, attempt }
}

function runningOf(a: RunningAttempt): RunningMessage {
  const m = a.envelope
  return { id: m.id, type: m.type, key: m.key, routeKey: m.routeKey, attempt: a.attempt, startedAt: a.startedAt }
}
