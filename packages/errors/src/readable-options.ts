/**
 * Reading what a caller passed as options, once, so that a throwing getter or `Proxy` trap becomes an
 * argument error naming the option instead of escaping untyped.
 *
 * @module
 */
import type { ArgumentError, ArgumentErrorClass } from './argument-error.js'
import { isFlowingError } from './flowing-error.js'

/** The rule an option breaks when reading it throws. */
export const READABLE_RULE = 'a readable option (reading it threw)'

/** The argument error for `argument`, whose listing or reading threw `thrown` (its `cause`). */
export function unreadable(error: ArgumentErrorClass, argument: string, thrown: unknown): ArgumentError {
  return new error(argument, READABLE_RULE, thrown, { cause: thrown })
}

/** `Array.isArray`, except that a revoked `Proxy` is no array instead of an exception. */
export function isArray(value: unknown): boolean {
  try {
    return Array.isArray(value)
  } catch {
    return false
  }
}

/** Whether `value` is an object, not `null`, not an array, not a function. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !isArray(value)
}

/** The own enumerable keys of `value`; a throwing `ownKeys` trap becomes an argument error. */
export function keysOf(error: ArgumentErrorClass, argument: string, value: object): string[] {
  try {
    return Object.keys(value)
  } catch (thrown) {
    throw unreadable(error, argument, thrown)
  }
}

/** `value[key]`; a throwing getter or `get` trap becomes an argument error naming `argument.key`. */
export function read(error: ArgumentErrorClass, argument: string, value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key]
  } catch (thrown) {
    throw unreadable(error, `${argument}.${key}`, thrown)
  }
}

/** A plain copy of `value`'s own enumerable properties, each read once (see `snapshot` of the checks). */
export function snapshot(error: ArgumentErrorClass, argument: string, value: unknown): Record<string, unknown> {
  if (!isObject(value)) throw new error(argument, 'an object', value)
  const copy: Record<string, unknown> = {}
  for (const key of keysOf(error, argument, value)) copy[key] = read(error, argument, value, key)
  return copy
}

/**
 * `thrown` if it is a Flowing error, else an argument error that it caused, naming the key of `value`
 * whose read throws (probed only here, on the error path), or `argument` itself.
 */
export function typed(error: ArgumentErrorClass, argument: string, thrown: unknown, value?: unknown): Error {
  if (isFlowingError(thrown)) return thrown as Error
  return unreadable(error, throwingKey(argument, value) ?? argument, thrown)
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
