import { type AbortSignalLike, type Attempt, type AttemptSnapshot, FencedError } from '@flowing/watchdog'
import type { Message, MessageMap, MessageType, PostOptions, PostResult } from '../contracts/message.js'
import type { HandlerContext } from '../dispatcher/handler.js'
import { LoopAbortedError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { Booking } from '../limits/rate-limit-hold.js'

/** The part of the loop an attempt needs: follow-ups and commit points. */
export interface FollowUpPoster<M extends MessageMap> {
  /** An effect of a finished or aborted attempt (without a watchdog guard) was refused: count it. */
  fenced(): void
  /** Records a commit point of `parent` in attempt `attempt`. */
  commit(parent: Envelope, checkpoint: unknown, attempt: number, startedAt: number): void
  /** The checkpoint of `parent`'s last commit, if any. */
  checkpointOf(parent: Envelope): unknown
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
  readonly attempt: number
  readonly startedAt: number
  readonly #envelope: Envelope
  readonly #loop: FollowUpPoster<M>
  // Created on first read of `signal` only: most handlers never look.
  #controller: AbortController | undefined
  // Aborted by a stop, or ended (its outcome recorded), without a guard to fence for us: later
  // effects through ctx are refused — whether or not a timeout applies (I6).
  #fenced: 'aborted' | 'ended' | undefined
  /** The watchdog's guard when a timeout applies: its signal and its fence replace ours. */
  readonly guard: Attempt | undefined
  /** The rate-limit budgets its start booked, until its handler is entered (or the attempt ends). */
  booking: Booking | undefined = undefined

  constructor(loop: FollowUpPoster<M>, envelope: Envelope, attempt: number, startedAt: number, guard?: Attempt) {
    this.#loop = loop
    this.guard = guard
    this.#envelope = envelope
    this.attempt = attempt
    this.startedAt = startedAt
  }

  get message(): Message<M> {
    return this.#envelope as unknown as Message<M>
  }

  get signal(): AbortSignalLike {
    if (this.guard !== undefined) return this.guard.signal
    this.#controller ??= new AbortController()
    return this.#controller.signal
  }

  heartbeat(): boolean {
    return this.guard === undefined ? true : this.guard.heartbeat()
  }

  /** The message this attempt runs. */
  get envelope(): Envelope {
    return this.#envelope
  }

  get committed(): unknown {
    return this.#loop.checkpointOf(this.#envelope)
  }

  commit(checkpoint?: unknown): void {
    this.#fence('ctx.commit')
    this.#loop.commit(this.#envelope, checkpoint, this.attempt, this.startedAt)
  }

  post<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): Message<M, T> {
    this.#fence('ctx.post') // a timed-out or aborted attempt's late effects are refused and counted
    return this.#loop.postFollowUp(this.#envelope, type, payload, options, 'throw') as Message<M, T>
  }

  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T> {
    this.#fence('ctx.tryPost')
    return this.#loop.postFollowUp(this.#envelope, type, payload, options, 'result') as PostResult<M, T>
  }

  #fence(effect: string): void {
    if (this.guard !== undefined) this.guard.fence(effect)
    else if (this.#fenced !== undefined) {
      const m = this.#envelope
      this.#loop.fenced()
      throw new FencedError(`${m.type} ${m.id}`, m.seq, this.#fenced, effect)
    }
  }

  /** What a stall report lists for this attempt. */
  describe(now: number): AttemptSnapshot {
    if (this.guard !== undefined) return this.guard.describe()
    const m = this.#envelope
    const key = m.key === undefined ? '' : ` (key ${JSON.stringify(m.key)})`
    return { epoch: m.seq, label: `${m.type}${key} ${m.id}`, state: 'running', ageMs: now - this.startedAt }
  }

  /**
   * The attempt's outcome was recorded: what the handler does through `ctx` from now on is refused
   * (`FencedError`) and counted — a follow-up of a finished attempt would run outside its message's
   * life, even during a draining stop.
   */
  end(): void {
    this.#fenced ??= 'ended'
  }

  /**
   * Aborts `signal` (if anyone read it) because the loop stops without draining; with `fence`, the
   * attempt's later effects through `ctx` are refused too (its message was handed back in a snapshot).
   */
  abort(fence = false, reason: unknown = new LoopAbortedError()): void {
    if (fence) this.#fenced = 'aborted'
    if (this.guard !== undefined) {
      // Handed back (fence): the attempt ends here. Otherwise only its signal aborts: its deadline
      // still holds, so a handler that never settles still times out and its message gets an outcome.
      if (fence) this.guard.cancel(reason)
      else this.guard.abort(reason)
      return
    }
    this.#controller ??= new AbortController()
    this.#controller.abort(reason)
  }
}
