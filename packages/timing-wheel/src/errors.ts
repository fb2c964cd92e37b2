/**
 * Every error the timing wheel throws. Each has a stable {@link TimingWheelError.code} to branch on, a
 * `name` equal to its class name, and a message that names the offending value, the rule it broke and
 * the live numbers that matter.
 *
 * @module
 */
import { ArgumentError, describeValue, FlowingError, flowingErrorFamilies } from '@flowing/errors'

/** Renders a value the way argument errors quote it: `` `NaN` (number) `` (shared by every Flowing package). */
export { describeValue }

/**
 * Stable machine-readable error codes, one per error class.
 *
 * @group Errors
 */
export type TimingWheelErrorCode = 'ERR_TIMING_WHEEL_INVALID_ARGUMENT' | 'ERR_TIMING_WHEEL_FULL'

/**
 * Base class of every timing-wheel error; a {@link FlowingError}, like the errors of every Flowing
 * package.
 *
 * @remarks Catch this to handle any failure of this package; switch on {@link TimingWheelError.code}
 * (stable across versions) rather than on the message (meant for humans).
 *
 * @group Errors
 */
export class TimingWheelError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: TimingWheelErrorCode

  /**
   * @param code - the stable code of the subclass
   * @param message - a human-readable message naming the value and the rule
   * @param options - standard `ErrorOptions` (`cause`)
   */
  constructor(code: TimingWheelErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
  }
}

/**
 * An argument or option broke its rule. Thrown synchronously, before anything changed: no timer was
 * scheduled, no option applied.
 *
 * @remarks An {@link ArgumentError} (`argument`, `rule`, `value` and `hint` are fields, the message has
 * the one shape of every Flowing argument error) and, through its family, a {@link TimingWheelError}:
 * `instanceof TimingWheelError` holds.
 *
 * @example
 * ```text
 * Expected `delayMs` to be a number from 0 to 9007199254740991, got `NaN` (number)
 * ```
 *
 * @group Errors
 */
export class WheelArgumentError extends ArgumentError {
  /** Also a {@link TimingWheelError}: one `catch` covers every error of the package. */
  static readonly [flowingErrorFamilies] = [TimingWheelError]
  /** The `code` of every `WheelArgumentError`. */
  static override readonly code = 'ERR_TIMING_WHEEL_INVALID_ARGUMENT'
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_TIMING_WHEEL_INVALID_ARGUMENT'
}

/**
 * The wheel already holds `maxPending` timers. Nothing was scheduled.
 *
 * @remarks Raise `maxPending` if the load is legitimate; otherwise something schedules timers faster
 * than they fire or are cancelled (a leak of handles that are never cancelled is the usual cause).
 *
 * @example
 * ```text
 * Timing wheel is full: cannot schedule another timer (1000000 pending, maxPending = 1000000)
 * ```
 *
 * @group Errors
 */
export class WheelFullError extends TimingWheelError {
  /** Timers pending when the schedule was refused. */
  readonly pending: number
  /** The configured bound. */
  readonly maxPending: number

  /**
   * @param pending - timers pending at the time
   * @param maxPending - the configured bound
   */
  constructor(pending: number, maxPending: number) {
    super(
      'ERR_TIMING_WHEEL_FULL',
      `Timing wheel is full: cannot schedule another timer (${pending} pending, maxPending = ${maxPending})`,
    )
    this.pending = pending
    this.maxPending = maxPending
  }
}
