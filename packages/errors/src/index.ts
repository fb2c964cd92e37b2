/**
 * **@flowing/errors** — the one error base of every Flowing package: {@link FlowingError} with a
 * stable `code`, a brand that keeps `instanceof` true across duplicate installed copies and across
 * packages, total helpers to read a caught value ({@link isFlowingError}, {@link errorCode}), and the
 * one value formatter every argument error quotes with ({@link describeValue}). Zero dependencies.
 *
 * @example
 * ```ts
 * import { describeValue, FlowingError, isFlowingError } from '@flowing/errors'
 *
 * const error = new FlowingError('ERR_APP_BAD_LIMIT', `Expected \`limit\` to be positive, got ${describeValue(-1)}`)
 * console.log(isFlowingError(error), error.code) // true ERR_APP_BAD_LIMIT
 * console.log(error.message) // Expected `limit` to be positive, got `-1` (number)
 * ```
 *
 * @packageDocumentation
 * @module @flowing/errors
 */
export { closestName } from './closest-name.js'
export { describeValue } from './describe-value.js'
export { errorCode, FlowingError, flowingErrorBrand, isFlowingError } from './flowing-error.js'
export { type Rename, renameOptions, warnDeprecated } from './renamed.js'
