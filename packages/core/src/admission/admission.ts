/**
 * The way in: a post becomes a validated, stamped, routed envelope whose idempotency key is claimed,
 * and is placed under the capacity and the overflow policy — or refused. Every refusal is counted
 * (`rejected`) and emitted before it reaches the caller; nothing changes before a refusal (I7); a
 * drop is an outcome with an event (I1).
 *
 * ```
 *  post ─▶ lifecycle? ─▶ timeout breaker? ─▶ pressure? ─▶ stamp (type, route) ─▶ claim key ─▶ place
 *            refuse        refuse             refuse        refuse (bad input)    refuse      queued | dropped | full
 * ```
 *
 * @module
 */

import type { AbortSignalLike } from '@flowing/watchdog'
import type { Message, MessageMap, MessageType, OverflowPolicy, PostOptions, PostResult } from '../contracts/message.js'
import {
  DelayedFullError,
  DuplicateMessageError,
  InvalidArgumentError,
  isFlowingError,
  LoopStoppedError,
  LoopStoppingError,
  QueueFullError,
  type QueueLoad,
  TimeoutBreakerOpenError,
} from '../errors.js'
import { thrownText } from '../failure/describe-failure.js'
import { mergeRetry } from '../failure/retry-policy.js'
import { Envelope, type Origin, Where } from '../internal/envelope.js'
import { type PostClock, postClockOf } from '../internal/post-clock.js'
import * as check from '../internal/validate.js'
import { Journal } from '../journal/journal.js'
import type { DelayedMessage } from '../timers/delayed-posts.js'
import type { AdmissionParts } from './admission-ports.js'
import { checkPostOptions } from './post-options.js'
import type { LoopPressure } from './pressure.js'
import { type RefusalStatus, RefusedPost } from './refusal.js'
import { Stamping } from './stamping.js'

/** Where {@link Admission.place} put a message. */
export type Placement = 'queued' | 'dropped' | 'full'

/** Validates, stamps, claims and places posts; counts and reports every refusal. */
export class Admission<M extends MessageMap> {
  readonly #p: AdmissionParts<M>
  // The parts read per post, kept at hand (one load each instead of two).
  readonly #gates: AdmissionParts<M>['gates']
  readonly #places: AdmissionParts<M>['places']
  readonly #records: AdmissionParts<M>['records']
  // Post order: the tiebreak among equal urgency, and the id's suffix.
  #seq = 0
  /** The headers of posts: given, inherited, stamped. */
  readonly stamping = new Stamping()
  readonly #postClock: PostClock // the time posts are stamped with (one reading a burst of ≤ 64)

  /** @param parts - the stages admission touches */
  constructor(parts: AdmissionParts<M>) {
    this.#p = parts
    this.#postClock = postClockOf(parts.clock)
    this.#gates = parts.gates
    this.#places = parts.places
    this.#records = parts.records
  }

  /** The queue's load now. */
  load(): QueueLoad {
    return this.#gates.load()
  }

  /**
   * Admits, drops or refuses a post whose `posted` was counted; `from` is a follow-up's parent side
   * (its root's id, its hop count, its headers).
   * @returns the message (`throws`), or a result (`tryPost`)
   */
  post(
    type: string,
    payload: unknown,
    options: PostOptions | undefined,
    throws: boolean,
    from?: Origin,
  ): Message<M> | PostResult<M, MessageType<M>> {
    this.checkOptions(type, options)
    return this.admit(type, payload, options, throws, this.#originOrRefuse(type, options, from))
  }

  /**
   * {@link Admission.post} for options already checked and an origin already built
   * ({@link Admission.originOf}: `send`, whose options are a superset, builds it when it is called).
   */
  admit(
    type: string,
    payload: unknown,
    options: PostOptions | undefined,
    throws: boolean,
    origin: Origin | undefined,
  ): Message<M> | PostResult<M, MessageType<M>> {
    const p = this.#p
    const request = this.#places.requests.take() // before any user code (a listener, a selector) may post
    const lifecycle = this.#gates.lifecycle
    if (!(origin !== undefined && origin.hops > 0 ? lifecycle.admitsFollowUps : lifecycle.admitsRoots)) {
      const state = lifecycle.state
      return this.refuse(type, 'stopped', () => stoppedError(`post \`${type}\``, state), throws)
    }
    if (this.#gates.breakers !== undefined) this.#checkTimeoutBreaker(type)
    const pressure = this.#gates.pressure
    if (pressure !== undefined) {
      const refused = this.#pressureRefusal(pressure, type, options, throws)
      if (refused !== undefined) return refused
    }
    const journal = this.#gates.journal
    let json: string | undefined
    if (journal !== undefined) {
      const refusal = journal.refusal
      if (refusal !== undefined) return this.refuse(type, 'not-durable', () => refusal, throws)
      json = this.#payloadJson(type, payload)
    }
    this.#checkPayload(type, payload)
    const m = this.stamp(type, payload, options, origin)
    if (request !== undefined) this.#places.requests.bind(m, request)
    if (options !== undefined) this.#records.extras.keep(m, options)
    if (options !== undefined || this.#records.ledger.current !== undefined) {
      const holder = this.#claimKey(m, options) // with `dedupe: 'id'`, keyless posts too
      if (holder !== undefined) return this.#refuseDuplicate(m, holder, throws)
    }
    const placed = this.place(m, options?.overflow ?? p.policy.options.overflow, true)
    if (placed === 'full') this.#unclaim(m)
    else journal?.admitted(m, json)
    const signal = options?.signal
    if (signal !== undefined && placed === 'queued') this.#watch(m, signal)
    return this.#answer(m, placed, throws)
  }

  // Refuses a post the pressure gauge sheds or rejects at the queue's length now (undefined: admitted).
  #pressureRefusal(pressure: LoopPressure, type: string, options: PostOptions | undefined, throws: boolean) {
    const priority = options?.priority ?? this.#p.policy.options.defaultPriority
    const queued = this.#places.queue.length
    const decision = pressure.decide(queued, priority)
    if (decision.admitted) return undefined
    const status = decision.outcome === 'shed' ? 'shed' : 'reject'
    return this.refuse(type, status, pressure.refusal(type, priority, decision, queued), throws)
  }

  /**
   * Accepts a delayed message (`postDelayed`, `postAt`; `from`: a follow-up's parent side, or `fire`: a
   * schedule's next fire, accepted while a stop drains); `posted` was counted. @throws as `post`, DelayedFullError
   */
  schedule<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    dueAt: number,
    options: PostOptions | undefined,
    from?: Origin | 'fire',
  ): DelayedMessage<M, T> {
    this.checkOptions(type, options)
    const { metrics, clock, events } = this.#p
    const { delayed } = this.#places
    this.#checkDelayedGates(type, from)
    const journal = this.#gates.journal
    if (journal?.refusal !== undefined) this.refuseInput(type, journal.refusal)
    const json = journal === undefined ? undefined : this.#payloadJson(type, payload)
    this.#checkPayload(type, payload)
    const origin = this.#originOrRefuse(type, options, from === 'fire' ? undefined : from)
    const m = this.stamp(type, payload, options, origin)
    this.#records.extras.keep(m, options)
    const holder = this.#claimKey(m, options)
    if (holder !== undefined) this.#refuseDuplicate(m, holder, true)
    const due = Math.max(dueAt, clock.now()) // a time in the past is due at once
    let handle: DelayedMessage<M, T>
    try {
      handle = delayed.schedule<M, T>(m, due)
    } catch (error) {
      this.#unclaim(m) // nothing was accepted: the claim and the side-table entry go
      return this.refuseInput(type, error as Error)
    }
    metrics.accepted++
    journal?.admitted(m, json)
    this.#records.traces.note(m, 'delayed', clock.now(), undefined, `due at ${due}`)
    events.emit('scheduled', m as unknown as Message<M>, due)
    if (options?.signal !== undefined && m.where === Where.Delayed) this.#watch(m, options.signal)
    return handle
  }

  // A post's `signal` cancels its message (at once when it is already aborted).
  #watch(m: Envelope, signal: AbortSignalLike): void {
    const places = this.#places
    const cancel = (e: Envelope) => {
      places.requests.cancelling(e, signal.reason)
      places.cancel(e, 'its signal was aborted', signal.reason)
    }
    if (signal.aborted) cancel(m)
    else this.#records.extras.watch(m, signal, cancel)
  }

  /** Validates per-post options; a bad one is a refused post. */
  checkOptions(type: string, options: PostOptions | undefined, forSend = false): void {
    try {
      checkPostOptions(options, forSend)
      // A per-post retry policy must make sense over its type's and the loop's (capMs ≥ baseMs).
      const retry = options?.retry
      if (retry !== undefined)
        mergeRetry('options.retry', retry, this.#p.policy.registry.retryFor(type), this.#p.policy.options.retry)
    } catch (error) {
      this.refuseInput(type, check.typedError('options', error, options)) // a throwing getter or Proxy trap: typed
    }
  }

  /**
   * Builds the envelope of a post whose options are valid: resolves the type, stamps the post time
   * (`internal/post-clock.ts`: the tolerance aging's bound, I3, carries) and runs the router's selector — unless
   * the route key was chosen already (`routeKey`: a restore chose it while checking the snapshot).
   * @throws (counted) UnknownMessageTypeError, UnknownRouteError, or InvalidArgumentError when the
   *   selector throws
   */
  stamp(
    type: string,
    payload: unknown,
    options: PostOptions | undefined,
    origin: Origin | undefined,
    routeKey?: string,
  ): Envelope {
    try {
      const router = this.#p.policy.registry.resolve(type)
      const { idPrefix, defaultPriority } = this.#p.policy.options
      const priority = options?.priority ?? defaultPriority
      const now = this.#postClock.now()
      const m = new Envelope(idPrefix, ++this.#seq, type, payload, options?.key, priority, now, origin)
      if (router !== undefined) m.routeKey = routeKey ?? router.select(m as unknown as Message<MessageMap, never>)
      return m
    } catch (error) {
      return this.refuseInput(type, error as Error)
    }
  }

  // A post's payload, by its type's `checkPayload` (if any): a refusal is counted and thrown.
  #checkPayload(type: string, payload: unknown): void {
    let checkPayload: ((payload: unknown) => void) | undefined
    try {
      checkPayload = this.#p.policy.registry.payloadCheckFor(type)
    } catch {
      return // an unknown type: stamp() refuses it, as before
    }
    if (checkPayload === undefined) return
    try {
      checkPayload(payload)
    } catch (error) {
      this.refuseInput(type, payloadRefusal(type, payload, error))
    }
  }

  /**
   * Puts `m` into the queue, or applies `overflow` when it is full: `drop-new` drops `m`,
   * `drop-oldest-lowest` evicts a victim no more urgent than `m` (or drops `m`), `reject` / `wait`
   * leave everything as it was and answer `full`. With `accept`, a placed message is counted accepted.
   */
  place(m: Envelope, overflow: OverflowPolicy, accept: boolean): Placement {
    const { queue, outcomes } = this.#places
    const { metrics } = this.#p
    const options = this.#p.policy.options
    if (queue.length >= options.capacity) {
      if (overflow === 'reject' || overflow === 'wait') return 'full'
      const victim = overflow === 'drop-oldest-lowest' ? queue.evictLowest(m.priority) : undefined
      if (accept) metrics.accepted++
      if (victim === undefined) {
        outcomes.dropped(m, 'drop-new')
        return 'dropped'
      }
      // The newcomer takes the victim's place before the victim's listeners run (they may stop the loop).
      this.enqueue(m)
      outcomes.dropped(victim, 'drop-oldest-lowest')
      return 'queued'
    }
    if (accept) metrics.accepted++
    this.enqueue(m)
    return 'queued'
  }

  /** Puts an accepted message into the queue and tells `posted` listeners. */
  enqueue(m: Envelope): void {
    this.insert(m)
    const events = this.#p.events
    if (events.hears.posted) events.emit('posted', m as unknown as Message<M>)
  }

  /**
   * Puts an accepted message into the queue without the `posted` event (the caller emits it later).
   * @param ranBefore - it had attempts or a commit point (restored): it may not be evicted
   */
  insert(m: Envelope, ranBefore = false): void {
    if (ranBefore) this.#places.queue.reenter(m)
    else this.#places.queue.push(m)
    this.#gates.journal?.touch(m) // a delayed message that came due is queued now
    this.queueChanged()
    this.#records.traces.note(m, 'queued', m.postedAt)
  }

  /** The queue's length changed: pressure levels follow, a pump is scheduled. */
  queueChanged(): void {
    this.#gates.pressure?.update(this.#places.queue.length)
    this.#places.schedulePump()
  }

  /** A due delayed message enters under the overflow policy in force now; false: no room, it waits. */
  enterDue(m: Envelope): boolean {
    m.postedAt = this.#postClock.now() // aging and queue wait start when it enters
    return this.place(m, this.#p.policy.options.overflow, false) !== 'full'
  }

  /** A delayed message that came due while the queue was full enters now that a slot freed. */
  enterOverdue(m: Envelope): void {
    m.postedAt = this.#postClock.now() // its wait starts now, behind what entered before it
    this.enqueue(m)
  }

  /**
   * Refuses an overload or lifecycle condition: thrown, or returned as a result — which builds no
   * error unless someone reads it (or listens to `rejected`).
   */
  refuse(type: string, status: RefusalStatus, make: () => Error, throws: boolean): PostResult<M, MessageType<M>> {
    if (throws) {
      const error = make()
      this.refused(type, error)
      throw error
    }
    const result = new RefusedPost(status, make)
    this.#p.metrics.rejected++
    if (this.#p.events.listenerCount('rejected') > 0) this.#p.events.emit('rejected', type, result.error)
    return result
  }

  /** Refuses bad input: always thrown. */
  refuseInput(type: string, error: Error): never {
    this.refused(type, error)
    throw error
  }

  /** Counts and reports a refusal. */
  refused(type: string, error: Error): void {
    this.#p.metrics.rejected++
    this.#p.events.emit('rejected', type, error)
  }

  /** Refuses a delay that is not a number of ms in range. */
  checkDelay(type: string, name: 'delayMs' | 'at', value: unknown): void {
    const ok =
      typeof value === 'number' &&
      (name === 'at' ? Number.isFinite(value) : value >= 0 && value <= Number.MAX_SAFE_INTEGER)
    if (ok) return
    const rule = name === 'at' ? 'a finite clock time in ms' : 'a number from 0 to Number.MAX_SAFE_INTEGER'
    this.refuseInput(type, new InvalidArgumentError(name, rule, value))
  }

  // A delayed post: refused once the loop stops (a schedule's next fire aside), by a timeout breaker, or full.
  #checkDelayedGates(type: string, from: Origin | 'fire' | undefined): void {
    const { admitsRoots: roots, admitsFollowUps: followUps, state } = this.#gates.lifecycle
    const admits = from === undefined ? roots : from === 'fire' ? roots || state === 'draining' : followUps
    if (!admits) this.refuseInput(type, stoppedError(`schedule \`${type}\``, state))
    this.#checkTimeoutBreaker(type)
    const { length } = this.#places.delayed
    const max = this.#p.policy.options.maxDelayed
    if (length >= max) this.refuseInput(type, new DelayedFullError(type, length, max))
  }

  #checkTimeoutBreaker(type: string): void {
    const openFor = this.#gates.breakers?.refuses(type)
    if (openFor !== undefined) this.refuseInput(type, new TimeoutBreakerOpenError(type, openFor))
  }

  #originOrRefuse(type: string, options: PostOptions | undefined, from: Origin | undefined): Origin | undefined {
    try {
      return this.stamping.originOf(type, options, from)
    } catch (error) {
      return this.refuseInput(type, error as Error)
    }
  }

  // Claims the idempotency key of a message being admitted; returns what holds it when it is a duplicate.
  #claimKey(m: Envelope, options: PostOptions | undefined): string | undefined {
    const { ledger } = this.#records
    if (ledger.current === undefined && options?.idempotencyKey === undefined) return undefined
    const idem = ledger.ensure()
    const key = idem.keyOf(m)
    if (key === undefined) return undefined
    try {
      return idem.claim(key, m.postedAt, m) // the reading the post stamped: no second one
    } catch (error) {
      this.#records.extras.forget(m)
      return this.refuseInput(m.type, error as Error) // a store that throws: refused, nothing admitted
    }
  }

  // The payload of a post to a loop with a journal, as JSON: a payload JSON cannot keep is refused.
  #payloadJson(type: string, payload: unknown): string | undefined {
    try {
      return Journal.json('payload', payload)
    } catch (error) {
      return this.refuseInput(type, error as Error)
    }
  }

  // A refused message was never accepted: its claim and its side-table entry go.
  #unclaim(m: Envelope): void {
    this.#records.ledger.current?.ended(m, 'released')
    this.#records.extras.forget(m)
  }

  #refuseDuplicate(m: Envelope, holder: string, throws: boolean): PostResult<M, MessageType<M>> {
    const key = this.#records.ledger.current?.keyOf(m) as string
    this.#records.extras.forget(m)
    this.#p.metrics.duplicates++
    this.#p.events.emit('duplicate', m.type, key, holder)
    return this.refuse(m.type, 'duplicate', () => new DuplicateMessageError(m.type, key, holder), throws)
  }

  // Answers a placement as `post` (the message) or `tryPost` (a result) does; `full` is refused.
  #answer(m: Envelope, placed: Placement, throws: boolean): Message<M> | PostResult<M, MessageType<M>> {
    if (placed === 'full') {
      const load = this.#gates.load()
      return this.refuse(m.type, 'full', () => new QueueFullError(m.type, load), throws)
    }
    const message = m as unknown as Message<M>
    if (throws) return message
    return placed === 'queued' ? { ok: true, status: 'queued', message } : { ok: false, status: 'dropped', message }
  }
}

// The refusal of a post after `stop()`: `LoopStoppingError` while it drains, `LoopStoppedError` after.
function stoppedError(action: string, state: string): LoopStoppedError {
  return state === 'stopped' ? new LoopStoppedError(action, 'stopped') : new LoopStoppingError(action)
}

// What a type's payload check threw, as a Flowing error (its own, or one naming `payload`).
function payloadRefusal(type: string, payload: unknown, error: unknown): Error {
  if (isFlowingError(error)) return error
  const rule = `a payload the \`checkPayload\` of \`${type}\` accepts`
  return new InvalidArgumentError('payload', rule, payload, { cause: error, hint: `it threw ${thrownText(error)}` })
}
