import { closestName, type Rename, renameOptions } from '@flowing/errors'
import { MAX_PRIORITY, MIN_PRIORITY } from '../contracts/priority.js'
import { InvalidArgumentError, isFlowingError, refuseUnknownKeys } from '../errors.js'

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

/** Argument checks that throw `InvalidArgumentError` in the one fixed shape. */
export function positiveInteger(name: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(
      name,
      max === Number.MAX_SAFE_INTEGER ? 'a positive integer' : `an integer from 1 to ${max}`,
      value,
    )
  }
  return value
}

export function nonNegativeInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, 'a non-negative integer', value)
  }
  return value
}

export function nonNegativeNumber(name: string, value: unknown, allowInfinity: boolean): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || (!allowInfinity && !Number.isFinite(value))) {
    throw new InvalidArgumentError(
      name,
      allowInfinity ? 'a non-negative number or Infinity' : 'a finite non-negative number',
      value,
    )
  }
  return value
}

export function priority(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_PRIORITY || value > MAX_PRIORITY) {
    throw new InvalidArgumentError(name, `an integer from ${MIN_PRIORITY} (most urgent) to ${MAX_PRIORITY}`, value)
  }
  return value
}

export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value)
  }
  return value as T
}

export function boolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(name, 'a boolean', value)
  return value
}

export function plainObject(name: string, value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || isArray(value)) {
    throw new InvalidArgumentError(name, 'an object', value)
  }
  return value as Record<string, unknown>
}

/**
 * Rejects keys outside `known`: a typo such as `capasity` must not be silently ignored. The error names
 * `<path>.<key>`, lists the known keys and, for a key within two edits of one of them, suggests it.
 * (Kept beside `InvalidArgumentError` in `errors.ts`, so error constructors can use it too.)
 *
 * @param path - the option object's name, e.g. `options` or `options.retry`
 * @param obj - the options (own enumerable keys are checked)
 * @param known - the keys it may have
 * @throws InvalidArgumentError naming the first unknown key
 */
export const checkKnownKeys: (path: string, obj: Record<string, unknown>, known: readonly string[]) => void =
  refuseUnknownKeys

/** The former name of {@link checkKnownKeys}. */
export const knownKeys = checkKnownKeys

/**
 * Copies the own enumerable properties of an options object into a plain object, reading each once:
 * what follows validates the copy, so a getter or a `Proxy` trap runs here and nowhere else, and one
 * that throws becomes a typed error instead of escaping untyped.
 *
 * @param name - the options' name, e.g. `options`
 * @param value - what the caller passed
 * @throws InvalidArgumentError for a non-object (rule "an object"), or naming the option whose read
 *   threw (rule "a readable option", `cause` and `value` set to what was thrown)
 */
export function snapshotOptions(name: string, value: unknown): Record<string, unknown> {
  let keys: string[]
  try {
    plainObject(name, value)
    keys = Object.keys(value as object)
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error
    throw unreadable(name, error) // a Proxy whose ownKeys / getOwnPropertyDescriptor trap throws
  }
  const copy: Record<string, unknown> = {}
  for (const key of keys) {
    try {
      copy[key] = (value as Record<string, unknown>)[key]
    } catch (error) {
      throw unreadable(`${name}.${key}`, error)
    }
  }
  return copy
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
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(name, 'a boolean or an options object', value)
  }
  const o = renames === undefined ? (value as Record<string, unknown>) : renamed(name, { ...value }, renames)
  for (const key of Object.keys(o)) {
    const rule = supplied[key]
    if (rule !== undefined) throw new InvalidArgumentError(`${name}.${key}`, rule, o[key])
  }
  checkKnownKeys(name, o, known)
  return o
}

/**
 * Runs a validation of user options; anything it throws that is not a Flowing error — a throwing
 * getter, a Proxy trap — becomes an `InvalidArgumentError` naming `name`, or the path under `value`
 * whose read throws (its `cause` the thrown value).
 */
export function readably<T>(name: string, validate: () => T, value?: unknown): T {
  try {
    return validate()
  } catch (error) {
    throw typedError(name, error, value)
  }
}

/**
 * `error` if it is a Flowing error, else an `InvalidArgumentError` that it caused, naming the key of
 * `value` whose read throws (probed only here, on the error path), or `name` itself.
 */
export function typedError(name: string, error: unknown, value?: unknown): Error {
  if (isFlowingError(error)) return error as Error
  return unreadable(throwingKey(name, value) ?? name, error)
}

// The path of the first thing under `value` (down to `depth` levels) whose listing or reading throws:
// `name` itself, `name.key`, `name.key.inner`; undefined when nothing does.
function throwingKey(name: string, value: unknown, depth = 3): string | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined
  let keys: string[]
  try {
    keys = Object.keys(value)
  } catch {
    return name
  }
  for (const key of keys) {
    let inner: unknown
    try {
      inner = (value as Record<string, unknown>)[key]
    } catch {
      return `${name}.${key}`
    }
    const deeper = depth > 1 ? throwingKey(`${name}.${key}`, inner, depth - 1) : undefined
    if (deeper !== undefined) return deeper
  }
  return undefined
}

function unreadable(name: string, thrown: unknown): InvalidArgumentError {
  return new InvalidArgumentError(name, 'a readable option (reading it threw)', thrown, { cause: thrown })
}

/** A function. */
export function fn(name: string, value: unknown): (...args: never[]) => unknown {
  if (typeof value !== 'function') throw new InvalidArgumentError(name, 'a function', value)
  return value as (...args: never[]) => unknown
}

// Array.isArray, except that a revoked Proxy is no array instead of an exception.
function isArray(value: unknown): boolean {
  try {
    return Array.isArray(value)
  } catch {
    return false
  }
}

/** The entry of `candidates` within two edits of `word`, if any (`closestName` of `@flowing/errors`). */
export const closest = closestName
