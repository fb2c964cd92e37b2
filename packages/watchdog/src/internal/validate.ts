/** Argument checks shared by the watchdog and the stall detector; each throws a WatchdogArgumentError. */
import { WatchdogArgumentError } from '../errors.js'

export const POSITIVE_RULE = 'a finite number > 0'

export function checkOptions(name: string, options: unknown): void {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new WatchdogArgumentError(name, 'an options object', options)
  }
}

export function checkKnownKeys(name: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new WatchdogArgumentError(`${name}.${key}`, `a known option (${known.join(', ')})`, (options as never)[key])
    }
  }
}

export function checkPositive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new WatchdogArgumentError(name, POSITIVE_RULE, value)
  }
  return value
}

export function checkOptionalFunction<F>(name: string, value: unknown): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new WatchdogArgumentError(name, 'a function', value)
  return value as F | undefined
}

export function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false
  return names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
}
