/**
 * Message headers: the shared empty map, the check of a headers map and the merge that builds a
 * message's own frozen copy — for transports and adapters that carry a message's headers elsewhere.
 * A message without headers pays nothing: it points at {@link NO_HEADERS}.
 *
 * @module
 */

import type { MessageHeaders } from './contracts/message.js'
import { InvalidArgumentError } from './errors.js'

/**
 * The headers of a message that has none (shared, frozen).
 *
 * @group Messages
 * @category Headers
 */
export const NO_HEADERS: MessageHeaders = Object.freeze({})

/**
 * Headers a message may carry.
 *
 * @group Messages
 * @category Headers
 */
export const MAX_HEADERS = 64
/**
 * Characters in a header name.
 *
 * @group Messages
 * @category Headers
 */
export const MAX_HEADER_NAME = 256
/**
 * Characters in a header value.
 *
 * @group Messages
 * @category Headers
 */
export const MAX_HEADER_VALUE = 8192

// An HTTP token (RFC 9110 §5.6.2): what HTTP, NATS and Kafka headers all accept as a name.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Line breaks and NUL would split or cut a header on a wire.
const BREAKS = /[\r\n\0]/

/**
 * Checks that `value` is a headers map (see `MessageHeaders`).
 * @throws InvalidArgumentError naming the first bad entry
 *
 * @group Messages
 * @category Headers
 */
export function checkHeaders(name: string, value: unknown): asserts value is MessageHeaders {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(name, 'an object of string headers', value)
  }
  let count = 0
  for (const header of Object.keys(value)) {
    if (++count > MAX_HEADERS) throw new InvalidArgumentError(name, `at most ${MAX_HEADERS} headers`, value)
    if (header.length > MAX_HEADER_NAME || !TOKEN.test(header)) {
      const rule = `header names of 1 to ${MAX_HEADER_NAME} token characters (letters, digits, !#$%&'*+-.^_\`|~)`
      throw new InvalidArgumentError(name, rule, header)
    }
    const text = (value as Record<string, unknown>)[header]
    if (typeof text !== 'string' || text.length > MAX_HEADER_VALUE || BREAKS.test(text)) {
      const rule = `a string of at most ${MAX_HEADER_VALUE} characters without line breaks or NUL`
      throw new InvalidArgumentError(`${name}.${header}`, rule, text)
    }
  }
}

const PLAIN = { enumerable: true, writable: true, configurable: true } as const

/**
 * `base` with `over`'s entries added or replaced, frozen; `base` itself when `over` adds nothing.
 *
 * @group Messages
 * @category Headers
 */
export function mergeHeaders(base: MessageHeaders, over: MessageHeaders): MessageHeaders {
  const names = Object.keys(over)
  if (names.length === 0) return base
  const merged: Record<string, string> = { ...base }
  // Defined, not assigned: a header named `__proto__` is a header like any other.
  for (const name of names) Object.defineProperty(merged, name, { value: over[name], ...PLAIN })
  if (Object.keys(merged).length > MAX_HEADERS) {
    throw new InvalidArgumentError('headers', `at most ${MAX_HEADERS} headers in all`, merged)
  }
  return Object.freeze(merged)
}
