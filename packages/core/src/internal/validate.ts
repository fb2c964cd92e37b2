/**
 * Core's argument checks: the kit of `@flowing/errors` bound to {@link InvalidArgumentError}, under the
 * names core's stages call, with core's words for its rules.
 *
 * @module
 */
import { argumentChecks, type Rename, renameOptions } from '@flowing/errors'
import { MAX_PRIORITY, MIN_PRIORITY } from '../contracts/priority.js'
import { InvalidArgumentError } from '../errors.js'

const check = argumentChecks(InvalidArgumentError)

/**
 * `integer`, `plainObject`, `fn`, `boolean`, `oneOf`, `snapshotOptions`, `readably`, `typedError`: see
 * `ArgumentChecks`.
 */
export const {
  integer,
  plainObject,
  fn,
  boolean,
  oneOf,
  snapshot: snapshotOptions,
  readably,
  typed: typedError,
  knownKeys: checkKnownKeys,
} = check

/** The former name of {@link checkKnownKeys}. */
export const knownKeys = checkKnownKeys

// Core's words for its ranges, built once: some checks run per post.
const NON_NEGATIVE_INTEGER = { min: 0, rule: 'a non-negative integer' }
const FINITE_NON_NEGATIVE = { min: 0, rule: 'a finite non-negative number' }
const NON_NEGATIVE_OR_INFINITY = { min: 0, finite: false, rule: 'a non-negative number or Infinity' }
const PRIORITY = {
  min: MIN_PRIORITY,
  max: MAX_PRIORITY,
  rule: `an integer from ${MIN_PRIORITY} (most urgent) to ${MAX_PRIORITY}`,
}

/** A safe integer from 1 to `max`: "a positive integer" (or "an integer from 1 to `max`"). */
export const positiveInteger = (name: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number =>
  check.integer(name, value, { min: 1, max, rule: max === Number.MAX_SAFE_INTEGER ? 'a positive integer' : undefined })

/** A safe integer ≥ 0: "a non-negative integer". */
export const nonNegativeInteger = (name: string, value: unknown): number =>
  check.integer(name, value, NON_NEGATIVE_INTEGER)

/** A number ≥ 0, `Infinity` too when `allowInfinity`. */
export const nonNegativeNumber = (name: string, value: unknown, allowInfinity: boolean): number =>
  check.number(name, value, allowInfinity ? NON_NEGATIVE_OR_INFINITY : FINITE_NON_NEGATIVE)

/** A wait in ms, more than 0 and at most `max`: "a number of ms above 0, at most `max`". */
export const positiveMs = (name: string, value: unknown, max: number): number => {
  const ms = check.number(name, value, { min: 0, max, rule: `a number of ms above 0, at most ${max}` })
  if (ms === 0) throw new InvalidArgumentError(name, `a number of ms above 0, at most ${max}`, value)
  return ms
}

/** `maxCrashes`: a positive integer, or `Infinity` (no crash-loop guard). */
export const maxCrashes = (name: string, value: unknown): number =>
  value === Number.POSITIVE_INFINITY
    ? value
    : check.integer(name, value, { min: 1, rule: 'a positive integer or Infinity' })

/** A priority level: an integer from 0 (most urgent) to 9. */
export const priority = (name: string, value: unknown): number => check.integer(name, value, PRIORITY)

/**
 * `options` (an object read once, see {@link snapshotOptions}) with its deprecated names moved to
 * the new ones, a `DeprecationWarning` once per rename.
 * @throws InvalidArgumentError when an old name and its new name are both given
 */
export function renamed(
  path: string,
  options: Record<string, unknown>,
  renames: readonly Rename[],
): Record<string, unknown> {
  return renameOptions(path, options, renames, (name, rule, value) => new InvalidArgumentError(name, rule, value))
}

/**
 * An option group that is `true`/`false` or an object (`backpressure`, `stall`): the object, checked
 * for keys the loop supplies itself (`supplied`: key → the rule explaining what to use instead) and
 * for unknown keys; with `renames`, a copy with the deprecated names moved to the new ones.
 * @throws InvalidArgumentError naming `name.key`
 */
export function optionGroup(
  name: string,
  value: unknown,
  known: readonly string[],
  supplied: Readonly<Record<string, string>>,
  renames?: readonly Rename[],
): Record<string, unknown> {
  const given = plainObject(name, value, 'a boolean or an options object')
  const o = renames === undefined ? given : renamed(name, { ...given }, renames)
  for (const key of Object.keys(o)) {
    const rule = supplied[key]
    if (rule !== undefined) throw new InvalidArgumentError(`${name}.${key}`, rule, o[key])
  }
  checkKnownKeys(name, o, known)
  return o
}
