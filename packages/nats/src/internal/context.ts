/**
 * The handler context of a distributed loop: core's own, except that `ctx.post` publishes the
 * follow-up into the streams (to whichever process its key's partition goes) instead of the local
 * queue. Follow-ups get deterministic ids (`<parent id>><n>`, counted per attempt), so a handler that
 * is retried, or redelivered after a crash, posts them again as duplicates the server drops; and the
 * parent is acknowledged only once they are stored.
 *
 * @module
 */
import {
  type AbortSignalLike,
  type HandlerContext,
  type Message,
  type MessageMap,
  type MessageType,
  type PostOptions,
  type PostResult,
  refusalStatusOf,
} from '@flowing/core'
import type { Delivery } from './deliveries.js'

/**
 * Publishes a follow-up of `parent` under `id` (a fresh id when undefined) and returns the message it
 * will be, with the promise of its being stored.
 */
export type FollowUp = (
  parent: Message<Record<string, unknown>, string>,
  id: string | undefined,
  type: string,
  payload: unknown,
  options: PostOptions | undefined,
) => { readonly stored: Promise<unknown>; readonly message: Message<Record<string, unknown>, string> }

/** `ctx` for a handler of a distributed loop. */
export class NatsContext<M extends MessageMap> implements HandlerContext<M> {
  readonly #ctx: HandlerContext<M>
  readonly #delivery: Delivery | undefined
  readonly #followUp: FollowUp

  /**
   * @param ctx - the local loop's context
   * @param delivery - the delivery the message came in (undefined only for a message this process
   *   no longer holds: its follow-ups then go out with fresh ids)
   * @param followUp - publishes one follow-up
   */
  constructor(ctx: HandlerContext<M>, delivery: Delivery | undefined, followUp: FollowUp) {
    this.#ctx = ctx
    this.#delivery = delivery
    this.#followUp = followUp
  }

  get message(): Message<M> {
    return this.#ctx.message
  }
  get attempt(): number {
    return this.#ctx.attempt
  }
  get startedAt(): number {
    return this.#ctx.startedAt
  }
  get signal(): AbortSignalLike {
    return this.#ctx.signal
  }
  get committed(): unknown {
    return this.#ctx.committed
  }
  heartbeat(): boolean {
    return this.#ctx.heartbeat()
  }
  commit(checkpoint?: unknown): void {
    this.#ctx.commit(checkpoint)
  }

  post<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): Message<M, T> {
    const d = this.#delivery
    let id: string | undefined
    if (d !== undefined) {
      if (d.followUpAttempt !== this.#ctx.attempt) {
        d.followUpAttempt = this.#ctx.attempt
        d.followUpCount = 0
      }
      id = `${d.wire.id}>${++d.followUpCount}`
    }
    const { stored, message } = this.#followUp(
      this.#ctx.message as unknown as Message<Record<string, unknown>, string>,
      id,
      type,
      payload,
      options,
    )
    d?.followUps.push(stored)
    return message as unknown as Message<M, T>
  }

  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T> {
    try {
      return { ok: true, status: 'queued', message: this.post(type, payload, options) }
    } catch (error) {
      // As core's `ctx.tryPost`: a refusal comes back as a result, bad input is thrown.
      const status = refusalStatusOf(error)
      if (status === undefined) throw error
      return { ok: false, status, error: error as Error }
    }
  }
}
