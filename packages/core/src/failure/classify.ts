/**
 * Error classes (seed 001 §2.4) and error signatures: what a failure means for the next attempt, and
 * what makes two failures "the same" for alerts.
 *
 * @module
 */
import { errorCode } from '@flowing/errors'
import type { WatchdogErrorCode } from '@flowing/watchdog'
import type { Classifier, ErrorClass, ErrorInfo } from '../contracts/failures.js'
import type { Message, MessageMap } from '../contracts/message.js'
import { type CrashLoopError, NonRetryableError, RetryableError } from '../errors.js'
import { describeFailure } from './describe-failure.js'

const NON_RETRYABLE: NonRetryableError['code'] = 'ERR_FLOWING_NON_RETRYABLE'
const RETRYABLE: RetryableError['code'] = 'ERR_FLOWING_RETRYABLE'
const TIMED_OUT: WatchdogErrorCode = 'ERR_HANDLER_TIMEOUT'
const CRASH_LOOP: CrashLoopError['code'] = 'ERR_FLOWING_CRASH_LOOP'

/**
 * The default classes: a `NonRetryableError` or a `CrashLoopError` → `non-retryable`; a `RetryableError` or the watchdog's
 * `HandlerTimeoutError` → `retryable`; an error with a boolean `retryable` property → that; anything
 * else → `unknown`.
 *
 * @remarks Flowing's errors are recognised by their stable `code` (`ERR_FLOWING_NON_RETRYABLE`,
 * `ERR_FLOWING_RETRYABLE`, `ERR_HANDLER_TIMEOUT`) and their brand, not by the prototype chain alone:
 * an error from a second installed copy of `@flowing/core` classifies the same. Total: it never throws,
 * whatever was thrown (a `Proxy` whose traps throw, a throwing `retryable` getter …).
 *
 * @group Failure handling
 * @category Error classification
 */
export function defaultClassify(error: unknown): ErrorClass {
  const code = errorCode(error)
  if (code === NON_RETRYABLE || code === CRASH_LOOP || error instanceof NonRetryableError) return 'non-retryable'
  if (code === RETRYABLE || code === TIMED_OUT || error instanceof RetryableError) return 'retryable'
  const flag = read(error, 'retryable')
  if (flag === true) return 'retryable'
  if (flag === false) return 'non-retryable'
  return 'unknown'
}

/**
 * Applies the user's classifier, then the default. A `CrashLoopError` is `non-retryable` whatever the
 * classifier says: the guard's verdict is that the message must not run again.
 */
export function classify(classifier: Classifier | undefined, error: unknown, message: Message<MessageMap>): ErrorClass {
  if (classifier !== undefined && errorCode(error) !== CRASH_LOOP) {
    try {
      const c = classifier(error, message)
      if (c === 'retryable' || c === 'non-retryable' || c === 'unknown') return c
    } catch {
      return 'unknown'
    }
  }
  return defaultClassify(error)
}

const MAX_SIGNATURE = 160

/**
 * `name: message` with the parts that vary between occurrences of the same failure masked — quoted
 * values, UUIDs and hex ids, numbers — so `timeout after 312 ms on order o-81` and
 * `timeout after 95 ms on order o-7` share one signature.
 *
 * @group Failure handling
 * @category Error classification
 */
export function errorSignature(name: string, message: string): string {
  const masked = message
    .replace(/(["'`]).*?\1/g, '$1…$1')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b/gi, '<hex>')
    .replace(/\d+(\.\d+)?/g, '#')
  const signature = `${name}: ${masked}`
  return signature.length > MAX_SIGNATURE ? `${signature.slice(0, MAX_SIGNATURE - 1)}…` : signature
}

/**
 * Describes a thrown value for a trace or a dead letter: name, message, code, stack and cause chain.
 *
 * @remarks Total: it never throws, whatever was thrown — a `Proxy` whose traps all throw, an error
 * whose `message` getter throws, an object whose `toString` throws, a symbol, a null-prototype object.
 * What cannot be read is reported as `Error` / `[unprintable value]`.
 *
 * @param error - what was thrown
 * @param errorClass - how it was classified
 *
 * @group Failure handling
 * @category Error classification
 */
export function errorInfo(error: unknown, errorClass: ErrorClass): ErrorInfo {
  const described = describeFailure(error)
  return { ...described, signature: errorSignature(described.name, described.message), errorClass }
}

// A property read that cannot throw (getters and Proxy traps may).
function read(value: unknown, key: string): unknown {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}
