/**
 * Every error the watchdog package throws or aborts with. Each has a stable
 * {@link WatchdogError.code} to branch on, a `name` equal to its class name, and a message that names
 * the value, the rule and the live numbers that matter.
 *
 * @module
 */
import { ArgumentError, describeValue, FlowingError, flowingErrorFamilies } from '@flowing/errors'

/** Renders a value the way argument errors quote it: `` `0` (number) `` (shared by every Flowing package). */
export { describeValue }

/**
 * Stable machine-readable error codes, one per error class.
 *
 * @group Errors
 */
export type WatchdogErrorCode =
  | 'ERR_WATCHDOG_INVALID_ARGUMENT'
  | 'ERR_HANDLER_TIMEOUT'
  | 'ERR_ATTEMPT_FENCED'
  | 'ERR_ATTEMPT_CANCELLED'

/**
 * Base class of every error of `@flowing/watchdog`; a {@link FlowingError}, like the errors of every
 * Flowing package (so `error instanceof FlowingError` holds for a {@link HandlerTimeoutError} too).
 *
 * @remarks Switch on {@link WatchdogError.code} (stable across versions), not on the message (meant
 * for humans).
 *
 * @group Errors
 */
export class WatchdogError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: WatchdogErrorCode

  /**
   * @param code - the stable code of the subclass
   * @param message - a human-readable message naming the value and the rule
   * @param options - standard `ErrorOptions` (`cause`)
   */
  constructor(code: WatchdogErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
  }
}

/**
 * An argument or option broke its rule. Thrown synchronously, before anything changed: no attempt
 * armed, no counter incremented.
 *
 * @remarks An {@link ArgumentError} (`argument`, `rule`, `value` and `hint` are fields, the message has
 * the one shape of every Flowing argument error) and, through its family, a {@link WatchdogError}:
 * `instanceof WatchdogError` holds.
 *
 * @example
 * ```text
 * Expected `timeoutMs` to be a finite number > 0, got `NaN` (number)
 * ```
 *
 * @group Errors
 */
export class WatchdogArgumentError extends ArgumentError {
  /** Also a {@link WatchdogError}: one `catch` covers every error of the package. */
  static readonly [flowingErrorFamilies] = [WatchdogError]
  /** The `code` of every `WatchdogArgumentError`. */
  static override readonly code = 'ERR_WATCHDOG_INVALID_ARGUMENT'
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_WATCHDOG_INVALID_ARGUMENT'
}

/**
 * Which deadline expired: the hard one (never moves) or the heartbeat one (extended by `heartbeat()`).
 *
 * @group Errors
 */
export type TimeoutKind = 'deadline' | 'heartbeat'

/**
 * The reason an attempt's signal is aborted with when it times out; also passed to `onTimeout`.
 *
 * @example
 * ```text
 * Handler order.paid (key "o-1", id 7) timed out after 5001 ms: its hard deadline is 5000 ms (attempt epoch 12)
 * ```
 *
 * @group Errors
 */
export class HandlerTimeoutError extends WatchdogError {
  /** What was guarded, as given at guard time (rendered). */
  readonly label: string
  /** The attempt's epoch. */
  readonly epoch: number
  /** Which deadline expired. */
  readonly kind: TimeoutKind
  /** The hard timeout of the attempt, in ms. */
  readonly timeoutMs: number
  /** The heartbeat timeout of the attempt, in ms (`0`: none). */
  readonly heartbeatMs: number
  /** Time from guard to timeout, in ms. */
  readonly elapsedMs: number

  /**
   * @param fields - what timed out and the measured numbers
   */
  constructor(fields: {
    label: string
    epoch: number
    kind: TimeoutKind
    timeoutMs: number
    heartbeatMs: number
    elapsedMs: number
    sinceHeartbeatMs: number
  }) {
    const { label, epoch, kind, timeoutMs, heartbeatMs, elapsedMs, sinceHeartbeatMs } = fields
    const rule =
      kind === 'deadline'
        ? `its hard deadline is ${timeoutMs} ms`
        : `no heartbeat for ${ms(sinceHeartbeatMs)} ms, the heartbeat timeout is ${heartbeatMs} ms (hard deadline ${timeoutMs} ms)`
    super(
      'ERR_HANDLER_TIMEOUT',
      `Handler ${label} timed out after ${ms(elapsedMs)} ms: ${rule} (attempt epoch ${epoch})`,
    )
    this.label = label
    this.epoch = epoch
    this.kind = kind
    this.timeoutMs = timeoutMs
    this.heartbeatMs = heartbeatMs
    this.elapsedMs = elapsedMs
  }
}

/**
 * An effect was attempted through an attempt that already lost its race (it is no longer running):
 * the effect was not applied.
 *
 * @example
 * ```text
 * Fenced off ctx.post of order.paid (key "o-1"): attempt epoch 12 is timed-out, not running
 * ```
 *
 * @group Errors
 */
export class FencedError extends WatchdogError {
  /** The attempt's rendered label. */
  readonly label: string
  /** The attempt's epoch. */
  readonly epoch: number
  /** The attempt's state when the effect was refused. */
  readonly state: string
  /** The effect that was refused, as named by the caller. */
  readonly effect: string

  /**
   * @param label - the attempt's rendered label
   * @param epoch - its epoch
   * @param state - its state
   * @param effect - the refused effect
   */
  constructor(label: string, epoch: number, state: string, effect: string) {
    super('ERR_ATTEMPT_FENCED', `Fenced off ${effect} of ${label}: attempt epoch ${epoch} is ${state}, not running`)
    this.label = label
    this.epoch = epoch
    this.state = state
    this.effect = effect
  }
}

/**
 * The default abort reason of a cancelled attempt (when `cancel()` is given no reason).
 *
 * @group Errors
 */
export class AttemptCancelledError extends WatchdogError {
  /** The attempt's epoch. */
  readonly epoch: number

  /**
   * @param label - the attempt's rendered label
   * @param epoch - its epoch
   */
  constructor(label: string, epoch: number) {
    super('ERR_ATTEMPT_CANCELLED', `Attempt epoch ${epoch} of ${label} was cancelled`)
    this.epoch = epoch
  }
}

function ms(value: number): number {
  return Math.round(value * 10) / 10
}
