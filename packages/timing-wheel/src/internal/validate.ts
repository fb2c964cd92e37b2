/**
 * Argument checks shared by the wheel and the driver. Each throws a {@link WheelArgumentError} naming
 * the argument, the rule and the value, before anything changed.
 *
 * @internal
 * @module
 */
import { WheelArgumentError } from '../errors.js'

/** The rule a delay breaks, as the error message states it. */
export const DELAY_RULE = `a number from 0 to ${Number.MAX_SAFE_INTEGER}`
/** The rule an absolute time breaks. */
export const TIME_RULE = 'a finite number ≥ 0'
/** Upper bound of `maxPending`: node indices have 24 bits, and the slot sentinels take some. */
export const MAX_PENDING_LIMIT = 16_000_000

/** A delay in ms: a number, 0 ≤ delay ≤ `Number.MAX_SAFE_INTEGER` (NaN fails both comparisons). */
export function isDelay(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER
}

/** An absolute time in ms: a finite number ≥ 0. */
export function isTime(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value <= Number.MAX_VALUE
}

/** Throws unless `value` is an absolute time; returns it. */
export function checkTime(argument: string, value: unknown): number {
  if (!isTime(value)) throw new WheelArgumentError(argument, TIME_RULE, value)
  return value
}

/** Throws unless `value` is a finite number > 0. */
export function checkPositive(argument: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value <= Number.MAX_VALUE)) {
    throw new WheelArgumentError(argument, 'a finite number > 0', value)
  }
  return value
}

/** Throws unless `value` is an integer from 1 to `max`. */
export function checkCount(argument: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new WheelArgumentError(argument, `an integer from 1 to ${max}`, value)
  }
  return value
}

/** Throws unless `value` is a positive integer or `Infinity` (an unlimited budget). */
export function checkLimit(argument: string, value: unknown): number {
  if (value === Number.POSITIVE_INFINITY) return value
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new WheelArgumentError(argument, 'a positive integer or Infinity', value)
  }
  return value
}

/** Throws unless `value` is a function. */
export function checkFunction<F extends (...args: never[]) => unknown>(argument: string, value: unknown): F {
  if (typeof value !== 'function') throw new WheelArgumentError(argument, 'a function', value)
  return value as F
}

/** Throws unless `value` is `undefined` or a plain options object. */
export function checkOptions(argument: string, value: unknown): void {
  if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new WheelArgumentError(argument, 'an options object', value)
  }
}

/** Throws when `options` has a key not in `known` (a typo such as `tickMS` is not silently ignored). */
export function checkKnownKeys(argument: string, options: object, known: readonly string[]): void {
  for (const [key, value] of Object.entries(options)) {
    if (!known.includes(key)) {
      const list = known.map((k) => `\`${k}\``).join(', ')
      throw new WheelArgumentError(`${argument}.${key}`, `absent (unknown option; known: ${list})`, value)
    }
  }
}
