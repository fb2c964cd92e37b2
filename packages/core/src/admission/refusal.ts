/**
 * A refused `tryPost`, without the cost of an `Error`: building one captures a stack (10–13 µs here,
 * against ~10 ns for the decision), which made refusal storms six times more expensive than the
 * work they protect. The result carries the status at once and builds the error — with the live
 * numbers captured at the refusal — only when someone reads `error`.
 *
 * @module
 */

import type { PostRefused } from '../contracts/message.js'
import { BackpressureError, DuplicateMessageError, LoopStoppedError, QueueFullError } from '../errors.js'

/**
 * The refusal statuses of `tryPost`.
 *
 * @group Messages
 * @category Posting
 */
export type RefusalStatus = PostRefused['status']

/**
 * The `tryPost` status of an error a `post` threw — `full`, `shed`, `reject`, `duplicate` or `stopped`,
 * as the loop's own `tryPost` answers it — or `undefined` for an error `tryPost` throws too (bad
 * input, a failed publish).
 *
 * @remarks For transports whose `tryPost` catches what their `post` throws (`@flowing/nats`), so the
 * two kinds of loop map refusals alike. `not-durable` is the loop journal's own status and never comes
 * from here.
 *
 * @param error - what `post` threw
 *
 * @group Messages
 * @category Posting
 */
export function refusalStatusOf(error: unknown): Exclude<RefusalStatus, 'not-durable'> | undefined {
  if (error instanceof QueueFullError) return 'full'
  if (error instanceof DuplicateMessageError) return 'duplicate'
  if (error instanceof LoopStoppedError) return 'stopped' // `LoopStoppingError` too
  if (error instanceof BackpressureError) return error.pressure.cause === 'shed' ? 'shed' : 'reject' // or the breaker
  return undefined
}

/** A `tryPost` refusal whose `error` is built on first read. */
export class RefusedPost implements PostRefused {
  /** Not admitted. */
  readonly ok = false
  /** Why. */
  readonly status: RefusalStatus
  // Builds the error on first read; dropped once built.
  #make: (() => Error) | undefined
  #error: Error | undefined

  /**
   * @param status - why it was refused
   * @param make - builds the error `post` would have thrown (numbers captured at the refusal)
   */
  constructor(status: RefusalStatus, make: () => Error) {
    this.status = status
    this.#make = make
  }

  /** The error `post` would have thrown (built now, once). */
  get error(): Error {
    if (this.#error === undefined) {
      this.#error = (this.#make as () => Error)()
      this.#make = undefined
    }
    return this.#error
  }

  /** `{ ok, status, error }` for logs and `JSON.stringify`. */
  toJSON(): { ok: false; status: RefusalStatus; error: { name: string; message: string } } {
    const { name, message } = this.error
    return { ok: false, status: this.status, error: { name, message } }
  }
}
