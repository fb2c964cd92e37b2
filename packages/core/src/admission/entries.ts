/**
 * Every way in, counted once: `post`, `tryPost`, `send`, `request`, `postDelayed`, `postAt`, a
 * handler's follow-ups (`ctx.post`, `ctx.tryPost`), a dead letter's replay and a restore. Each
 * counts `posted` here — its only writer — before anything can refuse it, so `posted = accepted +
 * rejected` holds whatever happens next: admission counts `accepted` and `rejected`, and the front
 * counts nothing.
 *
 * ```
 *  front · ctx · replay · restore ─▶ entries (posted) ─▶ admission ─▶ accepted | rejected
 * ```
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type {
  Message,
  MessageMap,
  MessageType,
  PostOptions,
  PostResult,
  RequestOptions,
  SendOptions,
} from '../contracts/message.js'
import type { LoopSnapshot, SnapshotMessage } from '../contracts/snapshot.js'
import { HopLimitError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import { type SplitRequest, splitRequestOptions } from '../requests/requests.js'
import { newSnapshot } from '../shutdown/snapshot.js'
import type { DelayedMessage } from '../timers/delayed-posts.js'
import type { Admission } from './admission.js'
import { type RestoreParts, restoreSnapshot } from './restore.js'

/** What the ways in hand their posts to. */
export interface EntryParts<M extends MessageMap> {
  readonly clock: Clock
  readonly metrics: LoopMetrics
  /** The loop's `maxHops` and `idPrefix`. */
  readonly limits: { readonly maxHops: number; readonly idPrefix: string }
  readonly admission: Pick<Admission<M>, 'post' | 'schedule' | 'replay' | 'checkDelay' | 'refuseInput' | 'refused'>
  /** `send()`'s wait for room. */
  readonly pacing: { send<T extends MessageType<M>>(type: T, payload: M[T], o?: SendOptions): Promise<Message<M, T>> }
  /** The promises of `request()`. */
  readonly requests: { open<R>(request: SplitRequest, post: () => unknown): Promise<R> }
  /** What a restore touches (the entries add their counter). */
  readonly restore: Omit<RestoreParts<M>, 'arrived'>
}

/** The ways in of one loop; the one writer of `posted`. */
export class Entries<M extends MessageMap> {
  readonly #p: EntryParts<M>
  // What a restore touches, counting each message it re-admits here.
  readonly #restore: RestoreParts<M>

  /** @param parts - what the ways in hand their posts to */
  constructor(parts: EntryParts<M>) {
    this.#p = parts
    this.#restore = { ...parts.restore, arrived: () => this.#arrived() }
  }

  /** One more post arrived, whatever becomes of it. */
  #arrived(): void {
    this.#p.metrics.posted++
  }

  /** `post()` (`throws`) and `tryPost()`. */
  post(type: string, payload: unknown, options: PostOptions | undefined, throws: boolean) {
    this.#arrived()
    return this.#p.admission.post(type, payload, options, throws)
  }

  /** `send()`: waits for room under `wait`. */
  send<T extends MessageType<M>>(type: T, payload: M[T], options: SendOptions | undefined): Promise<Message<M, T>> {
    this.#arrived()
    return this.#p.pacing.send(type, payload, options)
  }

  /** `request()`: a bad request option is a counted refusal, the rest is a post's. */
  request<R>(type: string, payload: unknown, options: RequestOptions | undefined): Promise<R> {
    this.#arrived()
    let request: SplitRequest
    try {
      request = splitRequestOptions(options)
    } catch (error) {
      this.#p.admission.refused(type, error as Error)
      return Promise.reject(error)
    }
    return this.#p.requests.open<R>(request, () => this.#p.admission.post(type, payload, request.post, true))
  }

  /** `postDelayed()` (`name` `delayMs`, from now) and `postAt()` (`name` `at`, a clock time). */
  schedule<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    name: 'delayMs' | 'at',
    value: number,
    options: PostOptions | undefined,
  ): DelayedMessage<M, T> {
    this.#arrived()
    const admission = this.#p.admission
    admission.checkDelay(type, name, value)
    return admission.schedule(type, payload, name === 'at' ? value : this.#p.clock.now() + value, options)
  }

  /** `ctx.post` (`throw`) / `ctx.tryPost` (`result`): a follow-up one hop further from the root. */
  postFollowUp<T extends MessageType<M>>(
    parent: Envelope,
    type: T,
    payload: M[T],
    options: PostOptions | undefined,
    mode: 'throw' | 'result',
  ): Message<M, T> | PostResult<M, T> {
    this.#arrived()
    const { admission, limits } = this.#p
    const hops = parent.hops + 1
    if (hops > limits.maxHops) admission.refuseInput(type, new HopLimitError(type, hops, limits.maxHops))
    const from = { trace: parent.traceId, hops, headers: parent.headers }
    return admission.post(type, payload, options, mode === 'throw', from) as Message<M, T> | PostResult<M, T>
  }

  /** A dead letter's replay: a new post of its type, payload, key and checkpoint. */
  replay(letter: DeadLetter, throws: boolean): Message<M> | PostResult<M, MessageType<M>> {
    this.#arrived()
    return this.#p.admission.replay(letter, throws)
  }

  /**
   * `restore()`: every message re-admitted counts as posted (see `restoreSnapshot`).
   * @param elapsedMs - time since it was taken, when not counted from `takenAt`
   * @param extraRoom - places beyond the capacity it may take (a journal's interrupted messages)
   */
  restore(snapshot: LoopSnapshot, elapsedMs?: number, extraRoom = 0, admitted?: Message<M>[]): number {
    return restoreSnapshot(this.#restore, snapshot, elapsedMs, extraRoom, admitted)
  }

  /** `readmit()`: one message handed over from elsewhere, re-admitted as a restore would. */
  readmit(message: SnapshotMessage): Message<M> | undefined {
    const admitted: Message<M>[] = []
    this.restore(newSnapshot(this.#p.clock, [message], false), 0, 0, admitted)
    return admitted[0]
  }

  /** The post number of one of this loop's message ids, or undefined for any other string. */
  seqOf(id: unknown): number | undefined {
    const prefix = `${this.#p.limits.idPrefix}:`
    if (typeof id !== 'string' || !id.startsWith(prefix)) return undefined
    const seq = Number.parseInt(id.slice(prefix.length), 36)
    return Number.isSafeInteger(seq) ? seq : undefined
  }
}
