import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { Message, MessageMap, SendOptions } from '../contracts/message.js'
import { type QueueLoad, SendAbortedError, SendTimeoutError } from '../errors.js'
import type { Origin } from '../internal/envelope.js'
import { type Waiter, WaitingRoom } from '../queue/waiting-room.js'

/** A producer parked in `send()`. */
export interface SendWaiter extends Waiter {
  readonly type: string
  readonly payload: unknown
  readonly options: SendOptions | undefined
  // Its headers and stamps, built when `send` was called (in the sender's async context).
  readonly origin: Origin | undefined
  resolve(message: never): void
  reject(error: unknown): void
  timer: TimerHandle | undefined
  onAbort: (() => void) | undefined
}

/**
 * The `wait` overflow policy: producers blocked in `send()` until a slot frees. One abort listener and
 * one timer per waiter at most (only if it passed a `signal` / `waitTimeoutMs`), never an emitter listener.
 */
export class SendGate<M extends MessageMap> {
  readonly #room = new WaitingRoom<SendWaiter>()
  readonly #clock: Clock
  // Admits a waiter's message (throws what `post` throws).
  readonly #admit: (w: SendWaiter) => unknown
  // Reports a waiter that gave up (timeout, abort, stop) so the loop counts it as rejected.
  readonly #gaveUp: (type: string, error: Error) => void
  #seq = 0

  constructor(clock: Clock, admit: (w: SendWaiter) => unknown, gaveUp: (type: string, error: Error) => void) {
    this.#clock = clock
    this.#admit = admit
    this.#gaveUp = gaveUp
  }

  /** Producers waiting. */
  get length(): number {
    return this.#room.length
  }

  /** Parks a producer until {@link SendGate.admitWhile} admits it, it times out or it is aborted. */
  wait(
    type: string,
    payload: unknown,
    options: SendOptions | undefined,
    priority: number,
    load: QueueLoad,
    origin: Origin | undefined,
  ): Promise<Message<M>> {
    const timeoutMs = options?.waitTimeoutMs ?? options?.timeoutMs // validated by the loop
    const signal = options?.signal
    if (signal?.aborted) throw new SendAbortedError(type, signal.reason)
    return new Promise<Message<M>>((resolve, reject) => {
      const w: SendWaiter = {
        type,
        payload,
        options,
        origin,
        priority,
        seq: this.#seq++,
        settled: false,
        resolve,
        reject,
        timer: undefined,
        onAbort: undefined,
      }
      this.#room.add(w)
      if (timeoutMs !== undefined) {
        w.timer = this.#clock.setTimeout(() => this.#giveUp(w, new SendTimeoutError(type, timeoutMs, load)), timeoutMs)
      }
      if (signal !== undefined) {
        w.onAbort = () => this.#giveUp(w, new SendAbortedError(type, signal.reason))
        signal.addEventListener('abort', w.onAbort, { once: true })
      }
    })
  }

  /**
   * Admits waiters, most urgent first, while `canAdmit(priority)` holds for the next one: exactly one
   * per free slot. Waiters are in priority order, so when the most urgent cannot enter, none can.
   */
  admitWhile(canAdmit: (priority: number) => boolean): void {
    for (let next = this.#room.peek(); next !== undefined && canAdmit(next.priority); next = this.#room.peek()) {
      const w = this.#room.next() as SendWaiter
      this.#release(w)
      try {
        w.resolve(this.#admit(w) as never)
      } catch (error) {
        w.reject(error) // already counted as rejected by the admission that threw
      }
    }
  }

  /** Rejects every waiter (the loop is stopping). */
  rejectAll(errorFor: (w: SendWaiter) => Error): void {
    for (let w = this.#room.next(); w !== undefined; w = this.#room.next()) {
      this.#release(w)
      const error = errorFor(w)
      this.#gaveUp(w.type, error)
      w.reject(error)
    }
  }

  #giveUp(w: SendWaiter, error: Error): void {
    if (!this.#room.withdraw(w)) return // admitted or gave up already: exactly one outcome
    this.#release(w)
    this.#gaveUp(w.type, error)
    w.reject(error)
  }

  #release(w: SendWaiter): void {
    if (w.timer !== undefined) this.#clock.clearTimeout(w.timer)
    if (w.onAbort !== undefined) w.options?.signal?.removeEventListener('abort', w.onAbort)
    w.timer = undefined
    w.onAbort = undefined
  }
}
