/**
 * Turns any thrown value into plain data without ever throwing: the part of failure bookkeeping that
 * touches user values, so the loop's own code after it cannot be derailed by what a handler threw.
 *
 * @module
 */
import { describeValue, errorCode, isFlowingError } from '@flowing/errors'
import type { ErrorCause } from '../contracts/failures.js'

/** What stands for a name, message or value that cannot be read or rendered. */
export const UNPRINTABLE = '[unprintable value]'

// Bounds that keep a dead letter small whatever was thrown: 10 000 letters × 4 KiB stacks is 40 MB at worst.
const MAX_STACK = 4096
const MAX_CAUSE_DEPTH = 5

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * Describes `error` and its `cause` chain (at most {@link MAX_CAUSE_DEPTH} levels below it; a cause
 * already seen in the chain ends it). Never throws: every read of a user value is guarded.
 */
export function describeFailure(error: unknown): ErrorCause {
  return describe(error, 0, new Set())
}

/** `name: message` of anything thrown, for an error message that quotes it. Never throws. */
export function thrownText(error: unknown): string {
  const { name, message } = describe(error, MAX_CAUSE_DEPTH, new Set())
  return `${name}: ${message}`
}

function describe(error: unknown, depth: number, seen: Set<unknown>): ErrorCause {
  const errorLike = isErrorLike(error)
  const out: Mutable<ErrorCause> = errorLike
    ? { name: stringProp(error, 'name') ?? 'Error', message: stringProp(error, 'message') ?? UNPRINTABLE }
    : { name: 'Error', message: `non-error thrown: ${render(error)}` }
  const code = errorCode(error)
  if (code !== undefined) out.code = code
  if (!errorLike) return out
  const stack = stringProp(error, 'stack')
  if (stack !== undefined) out.stack = stack.length > MAX_STACK ? `${stack.slice(0, MAX_STACK - 1)}…` : stack
  seen.add(error)
  const cause = read(error, 'cause')
  if (cause !== undefined && depth < MAX_CAUSE_DEPTH && !seen.has(cause)) out.cause = describe(cause, depth + 1, seen)
  return out
}

// An `Error` of this realm, of another realm (vm, iframe), or a branded Flowing error of another copy.
function isErrorLike(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false
  if (isFlowingError(value)) return true
  try {
    return value instanceof Error || Object.prototype.toString.call(value) === '[object Error]'
  } catch {
    return false // a Proxy whose getPrototypeOf / get trap throws
  }
}

// A thrown non-error as text: a string as it is, other primitives through String(), an object through
// its own toString when that works and returns a string, else the shared formatter (which runs no user code).
function render(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || typeof value !== 'object')
    return typeof value === 'function' ? describeValue(value) : String(value)
  try {
    const text: unknown = String(value)
    if (typeof text === 'string') return text
  } catch {
    // a throwing toString / Symbol.toPrimitive, a null-prototype object, a Proxy
  }
  return describeValue(value)
}

function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

function stringProp(value: object, key: string): string | undefined {
  const v = read(value, key)
  return typeof v === 'string' ? v : undefined
}
