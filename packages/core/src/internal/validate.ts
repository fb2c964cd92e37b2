import { InvalidArgumentError } from '../errors.js'
import { MAX_PRIORITY, MIN_PRIORITY } from '../priority.js'

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
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(name, 'an object', value)
  }
  return value as Record<string, unknown>
}

/** Rejects keys outside `known`: a typo such as `capasity` must not be silently ignored. */
export function knownKeys(name: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      throw new InvalidArgumentError(`${name}.${key}`, `one of the known options (${known.join(', ')})`, value[key])
  }
}

/** A function. */
export function fn(name: string, value: unknown): (...args: never[]) => unknown {
  if (typeof value !== 'function') throw new InvalidArgumentError(name, 'a function', value)
  return value as (...args: never[]) => unknown
}
