import type { Attempt, AttemptSnapshot } from '@flowing/watchdog'
import type { HandlerContext } from '../dispatcher/handler.js'
import { LoopAbortedError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { Message, MessageMap, MessageType, PostOptions, PostResult } from '../message.js'

/** The part of the loop an attempt needs to post follow-ups. */
export interface FollowUpPoster<M extends MessageMap> {
  postFollowUp<T extends MessageType<M>>(
    parent: Envelope,
    type: T,
    payload: M[T],
    options: PostOptions | undefined,
    mode: 'throw' | 'result',
  ): Message<M, T> | PostResult<M, T>
}

/**
 * One attempt of one message: what `ctx` is. Allocated per attempt (a handler may keep it after it
 * returned; reusing it across messages would let late effects act on the wrong message).
 */
export class AttemptContext<M extends MessageMap> implements HandlerContext<M> {
  readonly message: Message<M>
  readonly attempt: number
  readonly startedAt: number
  readonly #envelope: Envelope
  readonly #loop: FollowUpPoster<M>
  // Created on first read of `signal` only: most handlers never look.
  #controller: AbortController | undefined
  /** The watchdog's guard when a timeout applies: its signal and its fence replace ours. */
  readonly guard: Attempt | undefined

  constructor(loop: FollowUpPoster<M>, envelope: Envelope, attempt: number, startedAt: number, guard?: Attempt) {
    this.#loop = loop
    this.guard = guard
    this.#envelope = envelope
    this.message = envelope as unknown as Message<M>
    this.attempt = attempt
    this.startedAt = startedAt
  }

  get signal(): AbortSignal {
    if (this.guard !== undefined) return this.guard.signal
    this.#controller ??= new AbortController()
    return this.#controller.signal
  }

  heartbeat(): boolean {
    return this.guard === undefined ? true : this.guard.heartbeat()
  }

  post<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): Message<M, T> {
    this.guard?.fence('ctx.post') // a timed-out attempt's late effects are refused and counted
    return this.#loop.postFollowUp(this.#envelope, type, payload, options, 'throw') as Message<M, T>
  }

  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T> {
    this.guard?.fence('ctx.tryPost')
    return this.#loop.postFollowUp(this.#envelope, type, payload, options, 'result') as PostResult<M, T>
  }

  /** What a stall report lists for this attempt. */
  describe(now: number): AttemptSnapshot {
    if (this.guard !== undefined) return this.guard.describe()
    const m = this.#envelope
    const key = m.key === undefined ? '' : ` (key ${JSON.stringify(m.key)})`
    return { epoch: m.seq, label: `${m.type}${key} ${m.id}`, state: 'running', ageMs: now - this.startedAt }
  }

  /** Aborts `signal` (if anyone read it) because the loop stops without draining. */
  abort(): void {
    if (this.guard !== undefined) {
      this.guard.cancel(new LoopAbortedError())
      return
    }
    this.#controller?.abort(new LoopAbortedError())
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      this.#controller.abort(new LoopAbortedError())
    }
  }
}
