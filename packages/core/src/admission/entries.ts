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
import { HopLimitError, InvalidArgumentError } from '../errors.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { KeyedJobs } from '../jobs/keyed-jobs.js'
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
  readonly admission: Pick<Admission<M>, 'post' | 'schedule' | 'checkDelay' | 'refuseInput' | 'refused'>
  /** The posts that do more than admit: `send()`'s wait, `request()`'s promise, a job key's replacement. */
  readonly ways: {
    readonly pacing: { send<T extends MessageType<M>>(type: T, payload: M[T], o?: SendOptions): Promise<Message<M, T>> }
    readonly requests: { open<R>(request: SplitRequest, post: () => unknown): Promise<R> }
    readonly jobs: Pick<KeyedJobs<M>, 'post' | 'schedule'>
  }
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
    if (options !== undefined && jobKeyOf(options) !== undefined)
      return this.#p.ways.jobs.post(type, payload, options, throws)
    return this.#p.admission.post(type, payload, options, throws)
  }

  /** `send()`: waits for room under `wait`. */
  send<T extends MessageType<M>>(type: T, payload: M[T], options: SendOptions | undefined): Promise<Message<M, T>> {
    this.#arrived()
    if (options !== undefined && jobKeyOf(options) !== undefined) {
      return Promise.reject(this.#noJobKey(type, 'send()', jobKeyOf(options)))
    }
    return this.#p.ways.pacing.send(type, payload, options)
  }

  /** `request()`: a bad request option is a counted refusal, the rest is a post's. */
  request<R>(type: string, payload: unknown, options: RequestOptions | undefined): Promise<R> {
    this.#arrived()
    let request: SplitRequest
    try {
      if (options !== undefined && jobKeyOf(options) !== undefined)
        throw this.#noJobKey(type, 'request()', jobKeyOf(options))
      request = splitRequestOptions(options)
    } catch (error) {
      this.#p.admission.refused(type, error as Error)
      return Promise.reject(error)
    }
    return this.#p.ways.requests.open<R>(request, () => this.#p.admission.post(type, payload, request.post, true))
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
    const dueAt = name === 'at' ? value : this.#p.clock.now() + value
    if (options !== undefined && jobKeyOf(options) !== undefined)
      return this.#p.ways.jobs.schedule(type, payload, dueAt, options) as DelayedMessage<M, T>
    return admission.schedule(type, payload, dueAt, options)
  }

  /** A schedule's fire, due at `dueAt` (clock ms); `internal`: its next fire, accepted while a stop drains. */
  scheduleFire(type: string, payload: unknown, dueAt: number, options: PostOptions, internal: boolean) {
    this.#arrived()
    return this.#p.admission.schedule(
      type as MessageType<M>,
      payload as never,
      dueAt,
      options,
      internal ? 'fire' : undefined,
    )
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
    if (options !== undefined && jobKeyOf(options) !== undefined) {
      return this.#p.ways.jobs.post(type, payload, options, mode === 'throw', from) as Message<M, T> | PostResult<M, T>
    }
    return admission.post(type, payload, options, mode === 'throw', from) as Message<M, T> | PostResult<M, T>
  }

  /** A dead letter's replay: a new post of its type, payload, key and checkpoint. */
  replay(letter: DeadLetter, throws: boolean): Message<M> | PostResult<M, MessageType<M>> {
    this.#arrived()
    const { key, priority, idempotencyKey, headers } = letter
    const options: PostOptions = { key, priority, idempotencyKey, headers }
    const result = this.#p.admission.post(letter.type, letter.payload, options, throws)
    const m = (throws ? result : (result as { message?: Message<M> }).message) as unknown as Envelope | undefined
    // Its checkpoint carried over: the replay resumes after its commit point.
    if (m !== undefined && m.where !== Where.Done && letter.checkpoint !== undefined) {
      this.#p.restore.records.extras.commit(m, letter.checkpoint)
    }
    return result
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

  // `send()` and `request()` take no job key: a message one waits for is not one to replace.
  #noJobKey(type: string, way: string, jobKey: unknown): Error {
    const error = new InvalidArgumentError(
      'options.jobKey',
      `absent for ${way} (post, tryPost, postDelayed, postAt take one)`,
      jobKey,
    )
    if (way === 'send()') this.#p.admission.refused(type, error)
    return error
  }

  /** The post number of one of this loop's message ids, or undefined for any other string. */
  seqOf(id: unknown): number | undefined {
    const prefix = `${this.#p.limits.idPrefix}:`
    if (typeof id !== 'string' || !id.startsWith(prefix)) return undefined
    const seq = Number.parseInt(id.slice(prefix.length), 36)
    return Number.isSafeInteger(seq) ? seq : undefined
  }
}

// A post's `jobKey`, read without throwing: an unreadable option is admission's to refuse, typed.
function jobKeyOf(options: PostOptions): unknown {
  try {
    return options.jobKey
  } catch {
    return undefined
  }
}
