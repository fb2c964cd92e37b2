/**
 * The watchdog's argument checks: the kit of `@flowing/errors` bound to {@link WatchdogArgumentError}.
 *
 * @internal
 * @module
 */
import { argumentChecks, numberRule } from '@flowing/errors'
import { WatchdogArgumentError } from '../errors.js'

/** The rule of a duration: a finite number > 0 (`guard()` tests it inline). */
export const POSITIVE_RULE = numberRule({ above: 0 })

// The watchdog's options once spoke of an unknown one in these words, and its users' tests may match them.
const check = argumentChecks(WatchdogArgumentError, (known) => ({ rule: `a known option (${known.join(', ')})` }))

export const { knownKeys: checkKnownKeys, optionsObject: checkOptions } = check

/** A finite number > 0. */
export const checkPositive = (name: string, value: unknown): number => check.number(name, value, { above: 0 })

/** `undefined` or a function. */
export const checkOptionalFunction = <F>(name: string, value: unknown): F | undefined =>
  value === undefined ? undefined : check.fn<F & ((...args: never[]) => unknown)>(name, value)

/** Whether `value` is an object with a function under each of `names`. */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false
  return names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
}
