/**
 * Every error the backpressure package throws. Each has a stable {@link BackpressurePolicyError.code}
 * to branch on, a `name` equal to its class name, and a message that names the offending value, the
 * rule it broke and the live numbers that matter.
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
export type BackpressurePolicyErrorCode = 'ERR_BACKPRESSURE_INVALID_ARGUMENT'

/**
 * Base class of every error of `@flowing/backpressure`; a {@link FlowingError}, like the errors of every
 * Flowing package.
 *
 * @remarks Catch this to handle any failure of this package; switch on
 * {@link BackpressurePolicyError.code} (stable across versions) rather than on the message (meant for
 * humans). It is named *policy* error so that it never clashes with the overload error a loop throws
 * at its producers.
 *
 * @group Errors
 */
export class BackpressurePolicyError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: BackpressurePolicyErrorCode

  /**
   * @param code - the stable code of the subclass
   * @param message - a human-readable message naming the value and the rule
   * @param options - standard `ErrorOptions` (`cause`)
   */
  constructor(code: BackpressurePolicyErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
  }
}

/**
 * An argument or option broke its rule. Thrown synchronously, before anything changed: no option
 * applied, no level moved, no counter incremented.
 *
 * @remarks An {@link ArgumentError} (`argument`, `rule`, `value` and `hint` are fields, the message has
 * the one shape of every Flowing argument error) and, through its family, a {@link BackpressurePolicyError}:
 * `instanceof BackpressurePolicyError` holds.
 *
 * @example
 * ```text
 * Expected `warn.exit` to be below `warn.enter` (0.6), got `0.7` (number)
 * Expected `fill` to be a number ≥ 0, got `NaN` (number)
 * ```
 *
 * @group Errors
 */
export class BackpressureArgumentError extends ArgumentError {
  /** Also a {@link BackpressurePolicyError}: one `catch` covers every error of the package. */
  static readonly [flowingErrorFamilies] = [BackpressurePolicyError]
  /** The `code` of every `BackpressureArgumentError`. */
  static override readonly code = 'ERR_BACKPRESSURE_INVALID_ARGUMENT'
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_BACKPRESSURE_INVALID_ARGUMENT'
}
