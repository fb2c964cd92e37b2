/**
 * Request/response: `loop.request()` posts a message and resolves with its handler's return value,
 * or rejects with why it ended without success. Only requests pay: a plain `post()` allocates no
 * promise and no closure, and its outcome costs one `size` check here.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../contracts/clock.js'
import { RequestFailedError, type RequestOutcome } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
  m: Envelope | undefined
  timer: TimerHandle | undefined
  // Why it is being cancelled (an abort reason), for the rejection's cause.
  cause: unknown
}

/** The requests waiting for their message's outcome. */
export class Requests {
  readonly #clock: Clock
  readonly #giveUp: (m: Envelope, why: string) => void
  readonly #pending = new Map<Envelope, Pending>()
  // The request being posted: bound to its envelope by admission, before any outcome can happen.
  #armed: Pending | undefined

  /**
   * @param giveUp - cancels a message whose request timed out
   */
  constructor(clock: Clock, giveUp: (m: Envelope, why: string) => void) {
    this.#clock = clock
    this.#giveUp = giveUp
  }

  /** Requests waiting. */
  get size(): number {
    return this.#pending.size
  }

  /**
   * Runs `post` as a request: the promise settles with the outcome of the message it admits.
   * @param waitTimeoutMs - gives up after this long (the message is cancelled)
   */
  open<R>(waitTimeoutMs: number | undefined, post: () => unknown): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const pending: Pending = {
        resolve: resolve as (v: unknown) => void,
        reject,
        m: undefined,
        timer: undefined,
        cause: undefined,
      }
      this.#armed = pending
      try {
        post()
      } catch (error) {
        if (pending.m !== undefined) this.#pending.delete(pending.m)
        reject(error) // refused: the post's own error
        return
      } finally {
        this.#armed = undefined
      }
      const m = pending.m
      if (m === undefined || !this.#pending.has(m) || waitTimeoutMs === undefined) return
      pending.timer = this.#clock.setTimeout(() => this.#timedOut(m, waitTimeoutMs), waitTimeoutMs)
    })
  }

  /** The request being posted, if any (taken once, before user code can post something else). */
  take(): unknown {
    const armed = this.#armed
    this.#armed = undefined
    return armed
  }

  /** Binds a request {@link Requests.take}n by admission to the envelope it admits. */
  bind(m: Envelope, request: unknown): void {
    const pending = request as Pending
    pending.m = m
    this.#pending.set(m, pending)
  }

  /** `m` is being cancelled because of `cause` (a signal's reason): its request's rejection carries it. */
  cancelling(m: Envelope, cause: unknown): void {
    const pending = this.#pending.get(m)
    if (pending !== undefined) pending.cause = cause
  }

  /** `m` succeeded with `value`. */
  succeeded(m: Envelope, value: unknown): void {
    const pending = this.#settle(m)
    pending?.resolve(value)
  }

  /** `m` ended without success. */
  failed(m: Envelope, outcome: RequestOutcome, detail: string, cause?: unknown): void {
    const pending = this.#settle(m)
    if (pending === undefined) return
    const why = cause ?? pending.cause
    const options = why === undefined ? undefined : { cause: why }
    pending.reject(new RequestFailedError(outcome, m.type, m.id, detail, options))
  }

  #settle(m: Envelope): Pending | undefined {
    const pending = this.#pending.get(m)
    if (pending === undefined) return undefined
    this.#pending.delete(m)
    if (pending.timer !== undefined) this.#clock.clearTimeout(pending.timer)
    return pending
  }

  #timedOut(m: Envelope, waitTimeoutMs: number): void {
    const pending = this.#pending.get(m)
    if (pending === undefined) return
    pending.timer = undefined
    this.failed(m, 'timed-out', `no outcome within ${waitTimeoutMs} ms; the message is cancelled`)
    this.#giveUp(m, 'its request timed out')
  }
}
