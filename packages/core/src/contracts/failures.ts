/**
 * The failure stage's contract types: the `failureExit` option and report, and the payloads of the
 * `failed` and `retrying` events. A leaf module: the options, the events and the failure stage all
 * import it, it imports none of them.
 *
 * @module
 */
import type { Message, MessageHeaders, MessageKey, MessageMap } from './message.js'
import type { PriorityLevel } from './priority.js'

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

/**
 * One attempt: when it started, how long it ran, how it ended.
 *
 * @group Failure handling
 * @category Traces
 */
export interface AttemptRecord {
  /** 1 for the first. */
  readonly attempt: number
  /** Clock time (ms) it started. */
  readonly startedAt: number
  /**
   * When it started, in ms since the Unix epoch (wall clock; absent in records restored from
   * snapshots written before it existed).
   */
  readonly startedAtEpochMs?: number
  /** How long it ran (ms; up to the deadline for a timeout). */
  readonly durationMs: number
  /** How it ended. */
  readonly outcome: 'succeeded' | 'failed' | 'timed-out'
  /** Why it failed. */
  readonly error?: ErrorInfo
}

/**
 * A dead letter: plain, JSON-serializable data (if the payload is).
 *
 * @group Failure handling
 * @category Dead letters
 */
export interface DeadLetter {
  /** The message id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its payload. */
  readonly payload: unknown
  /** Its key, if any. */
  readonly key: MessageKey | undefined
  /** Its priority. */
  readonly priority: PriorityLevel
  /** Its route key, if its type has a router. */
  readonly routeKey: string | undefined
  /** The trace id it shares with its follow-ups. */
  readonly traceId: string
  /** `non-retryable`: failed for good at once; `exhausted`: its last allowed attempt failed. */
  readonly reason: 'non-retryable' | 'exhausted'
  /** The class of the last failure. */
  readonly errorClass: ErrorClass
  /** The last failure. */
  readonly error: ErrorInfo
  /** Every attempt, oldest first. */
  readonly attempts: readonly AttemptRecord[]
  /** Clock time (ms) it was dead-lettered. */
  readonly at: number
  /** When it was dead-lettered, in ms since the Unix epoch (wall clock: meaningful after a restart). */
  readonly atEpochMs: number
  /** Its idempotency key, if any: a replay carries it (the ledger's `failed` policy then applies). */
  readonly idempotencyKey?: string
  /** Its last commit point, if its handler committed: a replay resumes after it (`ctx.committed`). */
  readonly checkpoint?: unknown
  /** Its headers, if it has any: a replay carries them. */
  readonly headers?: MessageHeaders
}

/**
 * Where dead letters go besides the loop's in-memory store: a database table, a file, a topic. `add`
 * may be async; a rejection is reported as the loop's `sink-error` event (the letter is still in the
 * memory store, if it keeps any). Replay letters from your store with `loop.replay(letter)`.
 *
 * @group Failure handling
 * @category Dead letters
 */
export interface DeadLetterSink {
  /** Receives each dead letter once. */
  add(letter: DeadLetter): void | PromiseLike<void>
}

/**
 * Options of the `alerts` loop option.
 *
 * @group Failure handling
 * @category Alerts
 */
export interface AlertOptions {
  /**
   * Sliding window (ms): alerts of one type are at least this far apart, and count the dead letters in it.
   * @defaultValue 60_000
   */
  readonly windowMs?: number
  /**
   * Dead letters of a type within the window that make an alert.
   * @defaultValue 1
   */
  readonly threshold?: number
  /**
   * Signatures listed per alert.
   * @defaultValue 3
   */
  readonly top?: number
  /** Called with each alert (also emitted as the loop's `alert` event). A throw is re-thrown asynchronously. */
  readonly onAlert?: (alert: DeadLetterAlert) => void
}

/**
 * An error signature and how often it was seen.
 *
 * @group Failure handling
 * @category Alerts
 */
export interface SignatureCount {
  /** The masked `name: message` (see `errorSignature`). */
  readonly signature: string
  /** Dead letters with it since the previous alert of the type. */
  readonly count: number
}

/**
 * One alert: a summary, never a single letter.
 *
 * @group Failure handling
 * @category Alerts
 */
export interface DeadLetterAlert {
  /** The message type. */
  readonly type: string
  /** Clock time (ms). */
  readonly at: number
  /** The window (ms). */
  readonly windowMs: number
  /**
   * Dead letters of the type in the last window (to within a tenth of it). A summary that fires when the
   * window allows can show fewer than `sinceLastAlert`: the suppressed letters may have left the window.
   */
  readonly inWindow: number
  /** Dead letters of the type since its previous alert (all of them are summarised here). */
  readonly sinceLastAlert: number
  /** Dead letters of the type since the loop started. */
  readonly total: number
  /** The most frequent signatures since the previous alert, most frequent first. */
  readonly topSignatures: readonly SignatureCount[]
  /**
   * `window`: the threshold was reached (at once, or when the window allowed, for the letters it
   * suppressed); `stop`: the loop stopped with letters not yet alerted, or a letter came after it stopped.
   */
  readonly reason: 'window' | 'stop'
}

export type { CircuitBreakerOptions, CircuitChange, CircuitPolicy, CircuitState } from './circuits.js'

/**
 * A failure as traces and dead letters keep it: plain, JSON-serializable data.
 *
 * @group Failure handling
 * @category Error classification
 */
export interface ErrorInfo extends ErrorCause {
  /** `name: message` with volatile parts (numbers, ids, quoted values) masked: groups alike failures. */
  readonly signature: string
  /** How it was classified. */
  readonly errorClass: ErrorClass
}

/**
 * What a failure means for the next attempt:
 * - `retryable` — transient (a timeout, a 503): retried up to the policy's `maxAttempts`;
 * - `non-retryable` — no retry can fix it (bad data, a declined card): dead-lettered at once, and not
 *   counted against the route's circuit breaker (the downstream is fine);
 * - `unknown` — anything else: retried, but only up to `unknownMaxAttempts`.
 *
 * @group Failure handling
 * @category Error classification
 */
export type ErrorClass = 'retryable' | 'non-retryable' | 'unknown'

/**
 * Your classifier: return a class for the errors you know, `undefined` to fall back to
 * {@link defaultClassify}. A classifier that throws is treated as `unknown` (and never breaks the loop).
 *
 * @group Failure handling
 * @category Error classification
 */
export type Classifier = (error: unknown, message: Message<MessageMap>) => ErrorClass | undefined

/**
 * A thrown value as traces and dead letters keep it: plain, JSON-serializable data, safe to build from
 * anything (a dead letter's `error`, an attempt record's `error`).
 *
 * @group Failure handling
 * @category Error classification
 */
export interface ErrorCause {
  /** The error's `name` (`Error` for non-errors and for an error whose `name` cannot be read). */
  readonly name: string
  /** The error's message, the thrown value rendered, or `[unprintable value]`. */
  readonly message: string
  /** The error's string `code`, if it has one (`ERR_FLOWING_…`, `ECONNRESET` …). */
  readonly code?: string
  /** The error's stack, cut to its first 4096 characters; absent for non-errors. */
  readonly stack?: string
  /** The error's `cause`, described the same way: at most 5 levels, and a cause already in the chain ends it. */
  readonly cause?: ErrorCause
}
