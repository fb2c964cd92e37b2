/**
 * Delayed messages: `postDelayed` / `postAt` park a message on the hierarchical timing wheel until it
 * is due, then hand it to the queue.
 *
 * @module
 */
import type { DeadlineScheduler } from '@flowing/watchdog'
import type { Message, MessageMap, MessageType } from '../contracts/message.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { Ring } from '../internal/ring.js'

/** What the delayed store asks of the loop. */
export interface DelayedHost {
  /** A message became due: admit it, or drop it per the overflow policy. False: no room, keep it. */
  enterDue(m: Envelope): boolean
  /** Records the `cancelled` outcome of a message that never entered the queue. */
  cancelled(m: Envelope): void
  /** Cancels `m` wherever it waits (a handle's `cancel()`); false when it started or finished. */
  cancelWaiting?(m: Envelope): boolean
  /** A scheduled message came due (before it enters): a schedule's fire posts the next one. */
  cameDue?(m: Envelope): void
}

/**
 * A scheduled message: read its due time, cancel it while it is pending.
 *
 * @typeParam M - the message map
 * @typeParam T - the message type
 *
 * @group Messages
 * @category Messages
 */
export interface DelayedMessage<M extends MessageMap = MessageMap, T extends MessageType<M> = MessageType<M>> {
  /** The message that will be posted (its `postedAt` is set when it enters the queue). */
  readonly message: Message<M, T>
  /** Clock time (ms) from which it may run: never earlier. */
  readonly dueAt: number
  /** True while the message has not entered the queue (not yet due, or due and waiting for room). */
  readonly pending: boolean
  /**
   * Cancels the message until it starts running — not due yet, or due and waiting (behind its busy
   * key, held by a breaker or a rate limit, backing off before a retry): its outcome becomes
   * `cancelled`.
   * @returns true if it was cancelled; false if it is running, finished, or was handed to a snapshot
   */
  cancel(): boolean
}

// The handle `postDelayed` returns; the store keeps it to remove the wheel timer.
class DelayedHandle implements DelayedMessage {
  readonly message: Message
  readonly dueAt: number
  readonly #store: DelayedPosts
  readonly #envelope: Envelope
  // The wheel id.
  readonly timer: number

  constructor(store: DelayedPosts, envelope: Envelope, timer: number, dueAt: number) {
    this.#store = store
    this.#envelope = envelope
    this.timer = timer
    this.dueAt = dueAt
    this.message = envelope as unknown as Message
  }

  get pending(): boolean {
    return this.#envelope.where === Where.Delayed || this.#envelope.where === Where.Overdue
  }

  cancel(): boolean {
    return this.#store.cancelHandle(this.#envelope, this.timer)
  }
}

/**
 * The loop's delayed messages: pending on the wheel (one real timer armed for the earliest, driven by
 * the loop's clock, so virtual-time tests cover delays end to end), plus *overdue* ones — due while the
 * queue was full under `reject` / `wait`. An overdue message was accepted, so it may not vanish (I1):
 * it waits outside the queue and enters first when a slot frees, ahead of producers blocked in `send()`.
 */
export class DelayedPosts {
  // The loop's timing wheel, shared with the watchdog: only this store's own timers are touched.
  readonly #wheel: DeadlineScheduler<Envelope>
  // Scheduled messages and their handles (wheel id, due time), so a stop removes these timers and no
  // one else's, and a snapshot knows how long each still had to wait.
  readonly #timers = new Map<Envelope, DelayedHandle>()
  readonly #host: DelayedHost
  // Due while the queue was full; entries cancelled meanwhile are skipped lazily.
  readonly #overdue = new Ring<Envelope>()
  #overdueLive = 0
  // What a pending message's `where` says: `Delayed` (postDelayed) or `Backoff` (a retry).
  readonly #pendingAs: Where.Delayed | Where.Backoff
  // The loop's journal, told of every wait (a restart keeps the due time).
  #journal: { timed(m: Envelope, dueAt: number): void; touch(m: Envelope): void } | undefined

  /**
   * @param wheel - the loop's shared timing wheel; it hands due messages back through {@link DelayedPosts.due}
   * @param host - the loop
   * @param pendingAs - the state of a pending message: `Delayed`, or `Backoff` for the retry store
   */
  constructor(wheel: DeadlineScheduler<Envelope>, host: DelayedHost, pendingAs: Where.Delayed | Where.Backoff) {
    this.#wheel = wheel
    this.#host = host
    this.#pendingAs = pendingAs
  }

  /** Tells `journal` of every message scheduled from now on. */
  journalTo(journal: { timed(m: Envelope, dueAt: number): void; touch(m: Envelope): void }): void {
    this.#journal = journal
  }

  /** Scheduled and not yet due. */
  get scheduled(): number {
    return this.#timers.size
  }

  /** Due, waiting for room in the queue. */
  get overdue(): number {
    return this.#overdueLive
  }

  /** Everything pending (what `maxDelayed` bounds). */
  get length(): number {
    return this.#timers.size + this.#overdueLive
  }

  /** Parks `m` until `dueAt`. */
  schedule<M extends MessageMap, T extends MessageType<M>>(m: Envelope, dueAt: number): DelayedMessage<M, T> {
    m.where = this.#pendingAs
    const handle = new DelayedHandle(this, m, this.#wheel.add(dueAt, m), dueAt)
    this.#timers.set(m, handle)
    this.#journal?.timed(m, dueAt)
    return handle as unknown as DelayedMessage<M, T>
  }

  /** A handle's cancel: wherever `m` waits when the host can reach it there, else while it is pending here. */
  cancelHandle(m: Envelope, timer: number): boolean {
    const host = this.#host
    return host.cancelWaiting === undefined ? this.cancel(m, timer) : host.cancelWaiting(m)
  }

  /** Cancels a pending message; see {@link DelayedMessage.cancel}. */
  cancel(m: Envelope, timer: number): boolean {
    if (m.where === this.#pendingAs) {
      this.#wheel.remove(timer)
      this.#timers.delete(m)
    } else if (m.where === Where.Overdue) this.#overdueLive--
    else return false
    this.#host.cancelled(m) // the outcome (`Done`) is written there
    return true
  }

  /** The clock time scheduled `m` is due, or undefined when it is not on the wheel here. */
  dueOf(m: Envelope): number | undefined {
    return this.#timers.get(m)?.dueAt
  }

  /** The pending message with post number `seq`, if any (overdue ones included). */
  find(seq: number): Envelope | undefined {
    for (const m of this.#timers.keys()) if (m.seq === seq) return m
    for (const m of this.#overdue) if (m.seq === seq && m.where === Where.Overdue) return m
    return undefined
  }

  /** Cancels `m` if it is pending here (see {@link DelayedMessage.cancel}). */
  cancelMessage(m: Envelope): boolean {
    const handle = this.#timers.get(m)
    return handle === undefined ? m.where === Where.Overdue && this.cancel(m, -1) : this.cancel(m, handle.timer)
  }

  /** Lets overdue messages in, oldest first, while `hasRoom()`. */
  admitOverdue(hasRoom: () => boolean, admit: (m: Envelope) => void): void {
    while (this.#overdueLive > 0 && hasRoom()) {
      const m = this.#overdue.shift() as Envelope
      if (m.where !== Where.Overdue) continue // cancelled while it waited
      this.#overdueLive--
      admit(m)
    }
  }

  /** Removes every scheduled message (and overdue ones too if `overdue`), for a stop. */
  clear(overdue: boolean): Envelope[] {
    return this.takeAll(overdue).map((e) => e.m)
  }

  /**
   * Removes every scheduled message (and overdue ones too if `overdue`) with its due time (overdue
   * ones: already due), for a stop or a snapshot; `only`: just the scheduled ones it picks.
   */
  takeAll(overdue: boolean, only?: (m: Envelope) => boolean): { m: Envelope; dueAt: number }[] {
    const all: { m: Envelope; dueAt: number }[] = []
    for (const [m, handle] of this.#timers) {
      if (only !== undefined && !only(m)) continue
      this.#wheel.remove(handle.timer)
      all.push({ m, dueAt: handle.dueAt })
    }
    if (only === undefined) this.#timers.clear()
    else for (const e of all) this.#timers.delete(e.m)
    if (overdue) {
      for (let m = this.#overdue.shift(); m !== undefined; m = this.#overdue.shift()) {
        if (m.where === Where.Overdue) all.push({ m, dueAt: Number.NEGATIVE_INFINITY })
      }
      this.#overdueLive = 0
    }
    for (const e of all) e.m.where = Where.HandedOver // their outcomes follow at once
    return all
  }

  /** A scheduled message is due (called by the loop's wheel driver, in deadline order). */
  due(m: Envelope): void {
    this.#timers.delete(m)
    this.#host.cameDue?.(m)
    if (this.#overdueLive > 0 || !this.#host.enterDue(m)) {
      // Behind earlier overdue messages, or no room: wait, in due order.
      m.where = Where.Overdue
      this.#overdue.push(m)
      this.#overdueLive++
    }
    this.#journal?.touch(m) // no longer waiting: queued (or overdue, still delayed)
  }
}
