/**
 * **@flowing/errors** — the one error base of every Flowing package: {@link FlowingError} with a
 * stable `code`, a brand that keeps `instanceof` true across duplicate installed copies and across
 * packages, total helpers to read a caught value ({@link isFlowingError}, {@link errorCode}), the one
 * value formatter every argument error quotes with ({@link describeValue}), and the argument kit: the
 * {@link ArgumentError} base of every package's argument error and the checks that throw it
 * ({@link argumentChecks}). Zero dependencies.
 *
 * @example
 * ```ts
 * import { ArgumentError, argumentChecks, isFlowingError } from '@flowing/errors'
 *
 * class LimitArgumentError extends ArgumentError {
 *   static override readonly code = 'ERR_APP_INVALID_ARGUMENT'
 * }
 * const check = argumentChecks(LimitArgumentError)
 * try {
 *   check.integer('limit', -1, { min: 1 })
 * } catch (error) {
 *   console.log(isFlowingError(error), (error as LimitArgumentError).code) // true ERR_APP_INVALID_ARGUMENT
 *   console.log((error as LimitArgumentError).message) // Expected `limit` to be an integer ≥ 1, got `-1` (number)
 * }
 * ```
 *
 * @packageDocumentation
 * @module @flowing/errors
 */
export {
  type ArgumentChecks,
  argumentChecks,
  knownOptionsWording,
  type UnknownKeyWording,
} from './argument-checks.js'
export { ArgumentError, type ArgumentErrorClass, type ArgumentErrorOptions } from './argument-error.js'
export { closestName } from './closest-name.js'
export { describeValue } from './describe-value.js'
export {
  errorCode,
  FlowingError,
  type FlowingErrorClass,
  flowingErrorBrand,
  flowingErrorFamilies,
  isFlowingError,
} from './flowing-error.js'
export { type IntegerRange, integerRule, isIntegerIn, isNumberIn, type NumberRange, numberRule } from './ranges.js'
export { type Rename, renameOptions, warnDeprecated } from './renamed.js'
