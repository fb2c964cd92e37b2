import type { Message, MessageHeaders, MessageKey } from '../contracts/message.js'
import type { PriorityLevel } from '../contracts/priority.js'
import { NO_HEADERS } from '../headers.js'

/**
 * Where a message comes from and what it carries besides its payload: its root's id (`''` for a
 * root: its own id), its hop count and its headers. Absent for a plain root without headers.
 */
export interface Origin {
  readonly trace: string
  readonly hops: number
  readonly headers: MessageHeaders
}

/** Where an envelope is; the single source of truth for which structure holds it. */
export enum Where {
  /** In the ready level queue. */
  Ready = 0,
  /** Popped while its key was busy: waits in its key's lane. */
  Parked = 1,
  /** Left its lane when the key freed: waits in the unparked heap. */
  Unparked = 2,
  /** A handler is running it. */
  Running = 3,
  /** Reached an outcome. */
  Done = 4,
  /** Scheduled on the timing wheel, not yet due. */
  Delayed = 5,
  /** Due, but the queue was full: waits (outside the queue) to enter as soon as there is room. */
  Overdue = 6,
  /** Held in the queue by its route's open circuit breaker (counts against capacity). */
  Held = 7,
  /** Backing off on the timing wheel before a retry. */
  Backoff = 8,
  /**
   * Taken out of its holder (evicted by an overflow policy, or handed over by a stop) and about to get
   * its outcome: no one else may act on it meanwhile (a listener of another message's outcome could try).
   * Only the outcomes stage writes `Done`.
   */
  HandedOver = 9,
  /** Waits in the queue for its rate limit (a budget's lane): no worker held, its key kept. */
  Limited = 10,
  /** Waits in the queue for room in its key group (at most N of a group run at once), its key kept. */
  Grouped = 11,
}

/**
 * The one object allocated per message. Kept to 11 fields (~112 B in V8 without pointer compression):
 * attempt-scoped data (start time, attempt number, abort controller) lives on the attempt context, and
 * the id string is built only when someone reads it.
 */
export class Envelope {
  readonly seq: number
  readonly type: string
  readonly payload: unknown
  readonly key: MessageKey | undefined
  readonly priority: PriorityLevel
  // Set right after construction by the type's router, before the message is admitted.
  routeKey: string | undefined = undefined
  // When the message entered the queue; a delayed message gets its entry time when it becomes due.
  postedAt: number
  // Where a follow-up comes from — its root's id, its hop count — and the headers, or undefined for a
  // plain root (its trace id is its own id, 0 hops, no headers): one field keeps a message within 140 B.
  readonly #origin: Origin | undefined
  // The loop's id prefix, shared by every envelope of one loop.
  readonly #prefix: string
  where: Where = Where.Ready
  // Entry order into the queue: the tiebreak among equal urgency. Set at each entry (a delayed message
  // when it comes due, an unordered retry when it re-enters: behind what entered meanwhile); an ordered
  // retry or a held message keeps its own, so it gets its place back.
  order = 0

  constructor(
    prefix: string,
    seq: number,
    type: string,
    payload: unknown,
    key: MessageKey | undefined,
    priority: PriorityLevel,
    postedAt: number,
    origin: Origin | undefined,
  ) {
    this.#prefix = prefix
    this.seq = seq
    this.type = type
    this.payload = payload
    this.key = key
    this.priority = priority
    this.postedAt = postedAt
    this.#origin = origin
  }

  get id(): string {
    return `${this.#prefix}:${this.seq.toString(36)}`
  }

  get traceId(): string {
    const trace = this.#origin?.trace
    return trace === undefined || trace === '' ? this.id : trace
  }

  /** Hops from the root: 0 for a root, one more per `ctx.post`. */
  get hops(): number {
    return this.#origin?.hops ?? 0
  }

  /** Its headers (frozen; the shared empty map when it has none). */
  get headers(): MessageHeaders {
    return this.#origin?.headers ?? NO_HEADERS
  }

  /** Its origin, for a follow-up or a copy: `undefined` for a plain root. */
  get origin(): Origin | undefined {
    return this.#origin
  }

  toJSON(): Message {
    const { id, type, payload, key, priority, routeKey, postedAt, seq, traceId, hops, headers } = this
    return { id, type, payload, key, priority, routeKey, postedAt, seq, traceId, hops, headers } as Message
  }
}
