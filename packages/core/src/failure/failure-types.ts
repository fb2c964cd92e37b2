/**
 * The failure stage's contract types: the `failureExit` option and report, and the payloads of the
 * `failed` and `retrying` events. A leaf module: the options, the events and the failure stage all
 * import it, it imports none of them.
 *
 * @module
 */

import type { LoopSnapshot } from '../shutdown/snapshot.js'
import type { ErrorInfo } from './classify.js'

/**
 * Options of the `failureExit` loop option: the loop's failure exit.
 *
 * @group Failure handling
 * @category Failure exit
 */
export interface FailureExitOptions {
  /** Failed attempts / ended attempts in the window at or above which the loop stops, in (0, 1]. */
  readonly failureRate: number
  /**
   * The window (ms).
   * @defaultValue 10_000
   */
  readonly windowMs?: number
  /**
   * Attempts that must have ended in the window before the rate counts.
   * @defaultValue 20
   */
  readonly minVolume?: number
  /**
   * The stop's deadline (ms): running handlers get this long, then everything left is handed back.
   * @defaultValue 0
   */
  readonly deadlineMs?: number
  /** Receives the shutdown snapshot (write it somewhere durable; `loop.restore()` it after the fix). */
  readonly onSnapshot?: (snapshot: LoopSnapshot, report: FailureExitReport) => unknown
}

/**
 * Why the failure exit fired.
 *
 * @group Failure handling
 * @category Failure exit
 */
export interface FailureExitReport {
  /** The failure rate in the window (0–1). */
  readonly failureRate: number
  /** Attempts that ended in the window. */
  readonly attempts: number
  /** Of those, failed ones. */
  readonly failures: number
  /** The window (ms). */
  readonly windowMs: number
}

/**
 * How a failed attempt is reported by the `failed` event.
 *
 * @group Failure handling
 * @category Retries
 */
export interface AttemptFailure {
  /** The attempt that failed (1 for the first). */
  readonly attempt: number
  /** The error, as classified and signed. */
  readonly error: ErrorInfo
  /**
   * What happens next: a retry, a dead letter, or (`caller`) the error goes to the caller of
   * `loop.request()` (outcome `request-failed`).
   */
  readonly next: 'retry' | 'dead-letter' | 'caller'
}

/**
 * A retry, as the `retrying` event reports it.
 *
 * @group Failure handling
 * @category Retries
 */
export interface RetryScheduled {
  /** The attempt that will run (2 for the first retry). */
  readonly attempt: number
  /** The back-off (ms). */
  readonly delayMs: number
  /** Clock time (ms) from which it may run: never earlier. */
  readonly dueAt: number
}

/**
 * A logger for first-seen error signatures.
 *
 * @group Failure handling
 * @category Alerts
 */
export interface FailureLogger {
  /** Receives one line per new signature. */
  warn(message: string): void
}
