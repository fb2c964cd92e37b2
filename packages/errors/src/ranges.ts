/**
 * Numeric ranges of the argument checks, and the one wording of each: `an integer from 1 to 64`,
 * `a finite number > 0`, `a number in (0, 1]`.
 *
 * @module
 */

/**
 * The range an integer argument must lie in (both ends included), and optionally the rule's words.
 *
 * @group Arguments
 */
export interface IntegerRange {
  /** The least value allowed. @defaultValue `Number.MIN_SAFE_INTEGER` */
  readonly min?: number | undefined
  /** The greatest value allowed. @defaultValue `Number.MAX_SAFE_INTEGER` */
  readonly max?: number | undefined
  /** The rule as the message states it, instead of the one {@link integerRule} derives. */
  readonly rule?: string | undefined
}

/**
 * The range a number argument must lie in, and optionally the rule's words. `NaN` never passes;
 * `±Infinity` passes only with `finite: false` and no bound that excludes it.
 *
 * @group Arguments
 */
export interface NumberRange {
  /** The least value allowed (included). */
  readonly min?: number | undefined
  /** A bound the value must be above (excluded), e.g. `0` for "> 0". */
  readonly above?: number | undefined
  /** The greatest value allowed (included). */
  readonly max?: number | undefined
  /** A bound the value must be below (excluded). */
  readonly below?: number | undefined
  /** Whether `±Infinity` is refused. @defaultValue true */
  readonly finite?: boolean | undefined
  /** The rule as the message states it, instead of the one {@link numberRule} derives. */
  readonly rule?: string | undefined
}

/**
 * The words of an integer rule: `an integer`, `an integer ≥ 1`, `an integer ≤ 9`,
 * `an integer from 1 to 64` — or `range.rule` when given.
 *
 * @example
 * ```ts
 * import { integerRule } from '@flowing/errors'
 *
 * console.log(integerRule({ min: 1, max: 64 })) // an integer from 1 to 64
 * ```
 *
 * @group Arguments
 */
export function integerRule(range: IntegerRange = {}): string {
  if (range.rule !== undefined) return range.rule
  const { min, max } = range
  if (min !== undefined && max !== undefined) return `an integer from ${min} to ${max}`
  if (min !== undefined) return `an integer ≥ ${min}`
  return max === undefined ? 'an integer' : `an integer ≤ ${max}`
}

/**
 * The words of a number rule: `a finite number ≥ 0`, `a number > 0`, `a number from 0.001 to 3600000`,
 * `a number in (0, 1]`, `a number (not NaN)` — or `range.rule` when given. "finite" is said only where
 * no upper bound already excludes `Infinity`.
 *
 * @example
 * ```ts
 * import { numberRule } from '@flowing/errors'
 *
 * console.log(numberRule({ above: 0 })) // a finite number > 0
 * console.log(numberRule({ above: 0, max: 1 })) // a number in (0, 1]
 * ```
 *
 * @group Arguments
 */
export function numberRule(range: NumberRange = {}): string {
  if (range.rule !== undefined) return range.rule
  const { min, above, max, below, finite = true } = range
  const low = min ?? above
  const high = max ?? below
  if (low !== undefined && high !== undefined) {
    if (min !== undefined && max !== undefined) return `a number from ${min} to ${max}`
    return `a number in ${min === undefined ? '(' : '['}${low}, ${high}${max === undefined ? ')' : ']'}`
  }
  const kind = finite ? 'a finite number' : 'a number'
  if (low !== undefined) return `${kind} ${min === undefined ? '>' : '≥'} ${low}`
  if (high !== undefined) return `${kind} ${max === undefined ? '<' : '≤'} ${high}`
  return finite ? kind : 'a number (not NaN)'
}

/**
 * Whether `value` is a safe integer within `range`.
 *
 * @group Arguments
 */
export function isIntegerIn(value: unknown, range: IntegerRange = {}): value is number {
  return (
    typeof value === 'number' &&
    Number.isSafeInteger(value) &&
    !(value < (range.min ?? Number.MIN_SAFE_INTEGER)) &&
    !(value > (range.max ?? Number.MAX_SAFE_INTEGER))
  )
}

/**
 * Whether `value` is a number within `range` (never `NaN`).
 *
 * @group Arguments
 */
export function isNumberIn(value: unknown, range: NumberRange = {}): value is number {
  if (typeof value !== 'number' || Number.isNaN(value)) return false
  if (range.finite !== false && !Number.isFinite(value)) return false
  const { min, above, max, below } = range
  return (
    (min === undefined || value >= min) &&
    (above === undefined || value > above) &&
    (max === undefined || value <= max) &&
    (below === undefined || value < below)
  )
}
