/**
 * The loop's events: {@link LoopEvents} maps every event name to its arguments, and the payload
 * types no other contract holds. Stages emit through the loop's emitter; users listen on `loop.events`.
 *
 * @module
 */
import type { PressureTransition } from '@flowing/backpressure'
import type { StallReport } from '@flowing/watchdog'
import type { StoreError } from '../errors.js'
import type {
  AttemptFailure,
  CircuitChange,
  DeadLetter,
  DeadLetterAlert,
  ErrorInfo,
  FailureExitReport,
  RetryScheduled,
} from './failures.js'
import type { GateChange, RateLimitHold } from './flow.js'
import type { Message, MessageMap } from './message.js'
import type { FinishedSummary } from './outcomes.js'
import type { BreakerChange, WorkersChange } from './pool.js'

/** A zombie as the `zombies` event lists it. @group Timeouts and stalls */
export interface ZombieSummary {
  /** The attempt's epoch. */
  readonly epoch: number
  /** What ran: type, key, id. */
  readonly label: string
  /** How long since it started (ms). */
  readonly ageMs: number
}

/**
 * What the `time-limit` event reports.
 *
 * @group Flow control
 * @category Boundaries
 */
export interface TimeLimitReport {
  /** The limit (ms). */
  readonly maxRunMs: number
  /** How long the loop ran since its first `start()` (ms). */
  readonly ranMs: number
}

/** Lifecycle states: created → running ⇄ paused → draining → stopped. @group Loop */
export type LoopState = 'created' | 'running' | 'paused' | 'draining' | 'stopped'

/** Why a message was dropped. @group Events */
export type DropReason = 'drop-new' | 'drop-oldest-lowest' | 'duplicate'

/**
 * Event names and listener arguments: each member is an event, and its tuple names the listener's
 * arguments in order — `succeeded: [message, durationMs]` is `loop.events.on('succeeded', (message, durationMs) => …)`.
 *
 * @typeParam M - the message map
 * @group Events
 */
export interface LoopEvents<M extends MessageMap = MessageMap> {
  /** A message entered the queue (a delayed one when it became due). */
  posted: [message: Message<M>]
  /** A delayed message was accepted onto the timing wheel (`postDelayed` / `postAt`). */
  scheduled: [message: Message<M>, dueAt: number]
  /** A post was refused (the caller got the same error). */
  rejected: [type: string, error: Error]
  /** A handler started. */
  started: [message: Message<M>]
  /** A handler returned or resolved. */
  succeeded: [message: Message<M>, durationMs: number]
  /**
   * An attempt threw, rejected or timed out; `failure.next` says whether a retry, the dead-letter
   * store, or (`caller`: a request's failure, outcome `request-failed`) the request's caller follows.
   */
  failed: [message: Message<M>, error: unknown, failure: AttemptFailure]
  /** A failed message was scheduled for another attempt after a back-off (on the timing wheel). */
  retrying: [message: Message<M>, retry: RetryScheduled]
  /** A retry's back-off ended: the message is back in the queue. */
  requeued: [message: Message<M>, attempt: number]
  /** The outcome `dead-lettered`: the message failed for good (non-retryable, or out of attempts). */
  'dead-lettered': [message: Message<M>, letter: DeadLetter]
  /** A message reached the front while its route's circuit breaker was open: it waits in the queue. */
  held: [message: Message<M>, route: string]
  /** A route's circuit breaker changed state. */
  circuit: [change: CircuitChange]
  /**
   * A message waits for a rate limit: a budget is full, or its handler threw `RateLimitError` and its
   * route pauses. It stays in the queue (no worker held, its key kept) until `hold.until`.
   */
  'rate-limited': [message: Message<M>, hold: RateLimitHold]
  /** The resource gate (`gate` option) closed — nothing starts — or opened again. */
  gate: [change: GateChange]
  /** The `timeLimit` ran out: the loop stops, handing back what is left. */
  'time-limit': [report: TimeLimitReport]
  /** A de-noised dead-letter alert (at most one per type per window). */
  alert: [alert: DeadLetterAlert]
  /** A dead letter with an error signature not seen before for its type (logged once). */
  signature: [type: string, error: ErrorInfo, message: Message<M>]
  /** The dead-letter sink threw or rejected for a letter (the letter is still in the memory store). */
  'sink-error': [error: unknown, letter: DeadLetter]
  /**
   * The next fire of a schedule was refused (a failing journal, `maxDelayed` reached): the fire that
   * came due keeps holding the schedule, and the post is tried again every second.
   */
  'schedule-refused': [id: string, error: unknown]
  /** A post was refused because its idempotency key is in flight or done (a `rejected` event fires too). */
  duplicate: [type: string, idempotencyKey: string, ledgerState: string]
  /** A handler marked its commit point (`ctx.commit()`): the side effect is done, the message not yet. */
  committed: [message: Message<M>, checkpoint: unknown]
  /** An idempotency store call (`set`, `release`, a claim) threw or rejected. */
  'ledger-error': [error: unknown, idempotencyKey: string]
  /**
   * A journal store failed (a commit, the final close, a takeover): posts are refused with the error
   * until a commit succeeds again; nothing accepted is lost.
   */
  'store-error': [error: StoreError]
  /** A commit succeeded again after a `store-error`: posts are accepted again. */
  'store-recovered': [store: string]
  /** `restore()` re-admitted a snapshot's messages. */
  restored: [count: number, skipped: number]
  /** The failure rate passed the `failureExit` threshold: the loop stops, handing back what is left. */
  'failure-exit': [report: FailureExitReport]
  /** An overflow policy dropped a message (or, with an async idempotency store, it was a duplicate). */
  dropped: [message: Message<M>, reason: DropReason]
  /** A message was cancelled: queued ones by `stop({ drain: false })`, delayed ones by their handle or by `stop()`. */
  cancelled: [message: Message<M>]
  /** Queue empty and nothing running (fired on each transition to idle). */
  idle: []
  /** A draining `stop()` finished its work (just before the state becomes `stopped`). */
  drained: []
  /** Watermark backpressure changed level (one event per crossing; `backpressure` option). */
  backpressure: [transition: PressureTransition]
  /** A compensation hook finished after a timeout (`error` when it threw, rejected or timed out). */
  compensated: [message: Message<M>, error: unknown]
  /** The stall detector saw the event loop blocked, or no progress while work waits (`stall` option). */
  stall: [report: StallReport]
  /** More zombies than `maxZombies` (timed-out handlers still running past `graceMs`): once per crossing. */
  zombies: [count: number, zombies: readonly ZombieSummary[]]
  /** A type's timeout breaker changed state (see the `timeoutBreaker` option). */
  'timeout-breaker': [change: BreakerChange]
  /**
   * The old name of `timeout-breaker`, still emitted beside it (subscribing warns once per process).
   * @deprecated Listen to `timeout-breaker`.
   */
  breaker: [change: BreakerChange]
  /**
   * A message ended, whatever its outcome (`succeeded`, `dead-lettered`, `request-failed`, `dropped`,
   * `cancelled`, `snapshotted`): its last event, after the outcome's own (`request-failed` has none
   * but `failed` with `next: 'caller'`). `summary` tells how: attempts, queue wait, run time, time
   * from entering the queue to the outcome.
   */
  finished: [message: Message<M>, summary: FinishedSummary]
  /** The lifecycle state changed. */
  state: [state: LoopState, previous: LoopState]
  /** The worker count changed: the autoscaler (`workers: { min, max }`) or `loop.resize()`. */
  workers: [change: WorkersChange]
}

/** @internal Whether the per-message events have listeners (`LoopEmitter.hears`). */
export interface PerMessageListening {
  /** `posted` has listeners. */
  readonly posted: boolean
  /** `started` has listeners. */
  readonly started: boolean
  /** `succeeded` has listeners. */
  readonly succeeded: boolean
  /** `finished` has listeners. */
  readonly finished: boolean
}
