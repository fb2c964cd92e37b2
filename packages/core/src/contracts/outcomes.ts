/**
 * How a message ends: the five outcomes, the `finished` summary, and the per-message log line.
 *
 * @module
 */
import type { ErrorInfo } from './failures.js'
import type { MessageKey } from './message.js'

/**
 * The six ways a message ends; every accepted message ends in exactly one. `request-failed`: a
 * `loop.request()`'s handler failed for good and the caller took the error (its promise rejected
 * with it) — not dead-lettered unless the request asked (`deadLetter: true`).
 *
 * @group Events
 */
export type Outcome = 'succeeded' | 'dead-lettered' | 'request-failed' | 'dropped' | 'cancelled' | 'snapshotted'

/**
 * How a message ended: the `finished` event's summary.
 *
 * @remarks
 * Times are clock milliseconds. `waitMs` and `durationMs` describe the last attempt: for a message
 * that ended without running again after a failure (cancelled while backing off, say) `waitMs` is
 * `undefined` and `durationMs` is the last failed attempt's.
 *
 * @group Events
 */
export interface FinishedSummary {
  /** The outcome. */
  readonly outcome: Outcome
  /** Attempts that ran to an end (0: it never ran; a running attempt handed back by a stop is not counted). */
  readonly attempts: number
  /**
   * From entering the queue (a delayed message: when it came due) to the outcome, across every retry
   * and back-off (ms).
   */
  readonly lifecycleMs: number
  /** The last attempt's queue wait, from entering the queue to its start (ms); `undefined` when not measured. */
  readonly waitMs: number | undefined
  /** The last attempt's run time (ms); `undefined` when it never ran. */
  readonly durationMs: number | undefined
  /**
   * Why, for the outcomes that have a why: the drop reason (`drop-new`, `drop-oldest-lowest`,
   * `duplicate`), the dead letter's or failed request's (`non-retryable`, `exhausted`), the
   * snapshotted message's state.
   */
  readonly reason?: string
  /** The last failure of a dead-lettered or request-failed message. */
  readonly error?: ErrorInfo
}

/**
 * One line of the per-message log (`messageLog` option): the message's identity and its
 * {@link FinishedSummary}, flat, for a structured logger.
 *
 * @group Metrics
 */
export interface MessageLogLine extends FinishedSummary {
  /** The message id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its key, if any. */
  readonly key?: MessageKey
  /** Its route key, if its type has a router. */
  readonly routeKey?: string
  /** The trace id it shares with its follow-ups. */
  readonly traceId: string
}

/**
 * Where the per-message log lines go: any object with `info` and `warn` taking a fields object and a
 * message, as pino's loggers and `console` do. Dead-lettered and dropped messages are logged at
 * `warn`, the other outcomes at `info` (a `request-failed` one too: its caller holds the error).
 *
 * @example
 * ```ts
 * import pino from 'pino'
 * const loop = createLoop({ messageLog: pino() })
 * // {"level":30,"id":"x1:2","type":"order.paid","outcome":"succeeded","waitMs":0.4,"durationMs":12.1,…,"msg":"message finished"}
 * ```
 *
 * @group Metrics
 */
export interface MessageLogger {
  /** Receives the lines of succeeded, request-failed, cancelled and snapshotted messages. */
  info(line: MessageLogLine, message: string): void
  /** Receives the lines of dead-lettered and dropped messages. */
  warn(line: MessageLogLine, message: string): void
}
