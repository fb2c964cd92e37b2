/**
 * Checks that never throw, for code that touches values a handler threw or returned: one such throw
 * inside the loop's bookkeeping would leave a message without an outcome.
 *
 * @module
 */

/**
 * `value instanceof type`, except that a value whose prototype cannot be read (a revoked `Proxy`, a
 * `Proxy` whose `getPrototypeOf` trap throws) is no instance instead of an exception.
 */
export function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type
  } catch {
    return false
  }
}
