/**
 * The wheel's argument checks: the kit of `@flowing/errors` bound to {@link WheelArgumentError}, and
 * the rules of delays and times the hot paths test inline.
 *
 * @internal
 * @module
 */
import { argumentChecks, numberRule } from '@flowing/errors'
import { WheelArgumentError } from '../errors.js'

const DELAY = { min: 0, max: Number.MAX_SAFE_INTEGER } as const
const TIME = { min: 0 } as const

/** The rule a delay breaks, as the error message states it: a number from 0 to `Number.MAX_SAFE_INTEGER`. */
export const DELAY_RULE = numberRule(DELAY)
/** The rule an absolute time breaks: a finite number ≥ 0. */
export const TIME_RULE = numberRule(TIME)
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

// The wheel's options once spoke of an unknown one in these words, and its users' tests may match them.
const check = argumentChecks(WheelArgumentError, (known) => ({
  rule: `absent (unknown option; known: ${known.map((k) => `\`${k}\``).join(', ')})`,
}))

export const { knownKeys: checkKnownKeys, optionsObject: checkOptions, fn: checkFunction } = check

/** An absolute time; returns it. */
export const checkTime = (argument: string, value: unknown): number => check.number(argument, value, TIME)

/** An integer from 1 to `max`. */
export const checkCount = (argument: string, value: unknown, max: number): number =>
  check.integer(argument, value, { min: 1, max })

/** A positive integer or `Infinity` (an unlimited budget). */
export const checkLimit = (argument: string, value: unknown): number =>
  value === Number.POSITIVE_INFINITY
    ? value
    : check.integer(argument, value, { min: 1, rule: 'a positive integer or Infinity' })
