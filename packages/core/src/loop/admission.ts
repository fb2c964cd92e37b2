import type { Clock } from '../clock.js'
import type { Registry } from '../dispatcher/registry.js'
import {
  type BackpressureError,
  DuplicateMessageError,
  type LoopStoppedError,
  QueueFullError,
  type QueueLoad,
} from '../errors.js'
import { mergeRetry } from '../failure/retry-policy.js'
import { Envelope, Where } from '../internal/envelope.js'
import type { Message, MessageMap, MessageType, OverflowPolicy, PostOptions, PostResult } from '../message.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { DropReason, LoopEmitter } from './events.js'
import type { ResolvedLoopOptions } from './options.js'
import { checkPostOptions } from './post-options.js'

/** How a refusal reaches the caller: thrown (`post`) or returned (`tryPost`). */
export enum Mode {
  Throw = 0,
  Result = 1,
}

/** What admission needs from the loop. */
export interface AdmissionContext<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly clock: Clock
  readonly registry: Registry<M>
  readonly queue: RunQueue
  readonly metrics: LoopMetrics
  readonly events: LoopEmitter<M>
  schedulePump(): void
  load(): QueueLoad
  /** The queue's length changed (pressure levels follow it). */
  queueChanged(): void
  /** A message changed state (its trace and its idempotency key follow). */
  changed(m: Envelope, state: 'queued' | 'dropped' | 'cancelled'): void
}

/** Where {@link Admission.place} put a message. */
export type Placement = 'queued' | 'dropped' | 'full'

/**
 * The way in: turns a post into a validated, stamped, routed envelope, and places it under the
 * capacity and the overflow policy. Every refusal is counted (`rejected`) and emitted before it
 * reaches the caller; every drop is an outcome with an event (I1). Nothing changes before a refusal (I7).
 */
export class Admission<M extends MessageMap> {
  readonly #c: AdmissionContext<M>
  // Post order: the tiebreak among equal urgency, and the id's suffix.
  #seq = 0

  constructor(context: AdmissionContext<M>) {
    this.#c = context
  }

  /** Validates per-post options; a bad one is a refused post. */
  checkOptions(type: string, options: PostOptions | undefined, forSend: boolean): void {
    try {
      checkPostOptions(options, forSend)
      // A per-post retry policy must make sense over its type's and the loop's (capMs ≥ baseMs).
      const retry = options?.retry
      if (retry !== undefined)
        mergeRetry('options.retry', retry, this.#c.registry.retryFor(type), this.#c.options.retry)
    } catch (error) {
      this.refuseInput(type, error as Error)
    }
  }

  /**
   * Builds the envelope of a post whose options are valid: resolves the type, stamps the exact post
   * time (the aging bound, I3, is stated in real post times) and runs the router's selector.
   * @throws (counted) UnknownMessageTypeError, UnknownRouteError, or what the selector throws
   */
  stamp(
    type: string,
    payload: unknown,
    options: PostOptions | undefined,
    hops: number,
    trace: string | undefined,
  ): Envelope {
    try {
      const router = this.#c.registry.resolve(type)
      const { idPrefix, defaultPriority } = this.#c.options
      const priority = options?.priority ?? defaultPriority
      const m = new Envelope(
        idPrefix,
        ++this.#seq,
        type,
        payload,
        options?.key,
        priority,
        this.#c.clock.now(),
        hops,
        trace,
      )
      if (router !== undefined) m.routeKey = router.select(m as unknown as Message<MessageMap, never>)
      return m
    } catch (error) {
      return this.refuseInput(type, error as Error)
    }
  }

  /**
   * Puts `m` into the queue, or applies `overflow` when it is full: `drop-new` drops `m`,
   * `drop-oldest-lowest` evicts a victim no more urgent than `m` (or drops `m`), `reject` / `wait`
   * leave everything as it was and answer `full`. With `accept`, a placed message is counted accepted.
   */
  place(m: Envelope, overflow: OverflowPolicy, accept: boolean): Placement {
    const { queue, options, metrics } = this.#c
    if (queue.length >= options.capacity) {
      if (overflow === 'reject' || overflow === 'wait') return 'full'
      const victim = overflow === 'drop-oldest-lowest' ? queue.evictLowest(m.priority) : undefined
      if (accept) metrics.accepted++
      if (victim === undefined) {
        this.drop(m, 'drop-new')
        return 'dropped'
      }
      // The newcomer takes the victim's place before the victim's listeners run (they may stop the loop).
      this.enqueue(m)
      this.drop(victim, 'drop-oldest-lowest')
      return 'queued'
    }
    if (accept) metrics.accepted++
    this.enqueue(m)
    return 'queued'
  }

  /** Puts an accepted message into the queue. */
  enqueue(m: Envelope): void {
    this.insert(m)
    this.#c.events.emit('posted', m as unknown as Message<M>)
  }

  /** Puts an accepted message into the queue without the `posted` event (the caller emits it later). */
  insert(m: Envelope): void {
    this.#c.queue.push(m)
    this.#c.queueChanged()
    this.#c.changed(m, 'queued')
    this.#c.schedulePump()
  }

  /** The `dropped` outcome. */
  drop(m: Envelope, reason: DropReason): void {
    m.where = Where.Done
    this.#c.metrics.dropped++
    this.#c.changed(m, 'dropped')
    this.#c.events.emit('dropped', m as unknown as Message<M>, reason)
  }

  /** The `cancelled` outcome. */
  cancel(m: Envelope): void {
    m.where = Where.Done
    this.#c.metrics.cancelled++
    this.#c.changed(m, 'cancelled')
    this.#c.events.emit('cancelled', m as unknown as Message<M>)
  }

  /** Answers a placement as `post` (the message) or `tryPost` (a result) does; `full` is refused. */
  answer(m: Envelope, placed: Placement, mode: Mode): Message<M> | PostResult<M, MessageType<M>> {
    if (placed === 'full') return this.refuse(m.type, new QueueFullError(m.type, this.#c.load()), mode)
    const message = m as unknown as Message<M>
    if (mode === Mode.Throw) return message
    return placed === 'queued' ? { ok: true, status: 'queued', message } : { ok: false, status: 'dropped', message }
  }

  /** Refuses an overload or lifecycle condition: thrown, or returned as a result. */
  refuse(
    type: string,
    error: QueueFullError | LoopStoppedError | BackpressureError | DuplicateMessageError,
    mode: Mode,
  ): PostResult<M, MessageType<M>> {
    this.refused(type, error)
    if (mode === Mode.Throw) throw error
    return { ok: false, status: statusOf(error), error }
  }

  /** Refuses bad input: always thrown. */
  refuseInput(type: string, error: Error): never {
    this.refused(type, error)
    throw error
  }

  /** Counts and reports a refusal. */
  refused(type: string, error: Error): void {
    this.#c.metrics.rejected++
    this.#c.events.emit('rejected', type, error)
  }
}

function statusOf(
  error: QueueFullError | LoopStoppedError | BackpressureError | DuplicateMessageError,
): 'full' | 'stopped' | 'shed' | 'reject' | 'duplicate' {
  if (error instanceof QueueFullError) return 'full'
  if (error instanceof DuplicateMessageError) return 'duplicate'
  if (error.code === 'ERR_FLOWING_LOOP_STOPPED') return 'stopped'
  return (error as BackpressureError).pressure.cause === 'shed' ? 'shed' : 'reject'
}
