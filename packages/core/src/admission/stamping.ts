/**
 * The headers of a post: its parent's (a follow-up), the ones it is given, then what each stamper adds
 * (`loop.stamp`), merged in that order into the message's own frozen map.
 *
 * @module
 */

import type { HeaderStamper, MessageHeaders, PostOptions } from '../contracts/message.js'
import { InvalidArgumentError } from '../errors.js'
import { checkHeaders, mergeHeaders, NO_HEADERS } from '../headers.js'
import type { Origin } from '../internal/envelope.js'

/** The loop's header stampers, and the origin they give each post. */
export class Stamping {
  // In registration order (replaced, never mutated: a stamper may add another while one runs).
  #stampers: readonly HeaderStamper[] = []

  /** Adds a stamper (see `HeaderStamper`), run after those added before it. */
  add(stamper: HeaderStamper): void {
    this.#stampers = [...this.#stampers, stamper]
  }

  /**
   * The origin of a post whose options are valid: `from` (a follow-up's parent side, or undefined for
   * a root), with the post's headers and then each stamper's merged over its headers. Plain roots
   * without headers and stampers get `undefined`: nothing is allocated.
   * @throws (not counted: the caller refuses the post) InvalidArgumentError for too many headers, or a
   *   stamper that threw or returned something else than headers
   */
  originOf(type: string, options: PostOptions | undefined, from: Origin | undefined): Origin | undefined {
    const given = options?.headers
    const stampers = this.#stampers
    if (given === undefined && stampers.length === 0) return from
    const headers = stampHeaders(stampers, type, mergeHeaders(from?.headers ?? NO_HEADERS, given ?? NO_HEADERS))
    return { trace: from?.trace ?? '', hops: from?.hops ?? 0, headers }
  }
}

/**
 * `headers` with what each stamper adds merged over them, in order — how `loop.stamp` stampers run
 * at a post, for transports that post elsewhere (`@flowing/nats`).
 *
 * @param stampers - run in order, each seeing the headers so far
 * @param type - the posted message type
 * @param headers - the post's headers before stamping (its parent's and its own, merged)
 * @throws InvalidArgumentError (argument `stamper`, the thrown value as its `cause`) for a stamper that
 *   throws; for one that returns something else than headers, or too many
 *
 * @group Messages
 * @category Headers
 */
export function stampHeaders(
  stampers: readonly HeaderStamper[],
  type: string,
  headers: MessageHeaders,
): MessageHeaders {
  let out = headers
  for (const stamper of stampers) out = mergeHeaders(out, stamped(stamper, type, out))
  return out
}

// What a stamper adds, checked; a stamper that throws is a typed error with what it threw as the cause.
function stamped(stamper: HeaderStamper, type: string, headers: MessageHeaders): MessageHeaders {
  let added: MessageHeaders | undefined
  try {
    added = stamper(type, headers)
  } catch (error) {
    throw new InvalidArgumentError('stamper', 'a header stamper that returns headers (it threw)', error, {
      cause: error,
    })
  }
  if (added === undefined) return NO_HEADERS
  checkHeaders('the headers a stamper returned', added)
  return added
}
