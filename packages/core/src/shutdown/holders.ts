/**
 * Every stage that holds accepted messages outside the pool implements one port: how many it holds,
 * and hand them all over. A stop's cut-off, a stop without drain and a snapshot are then the same
 * loop — each holder hands over its messages, and the outcomes stage ends each one — and I1 reads:
 *
 * ```
 *   accepted = outcomes recorded + Σ holder.size + running (the pool) + in transit (a failure being handled)
 * ```
 *
 * @module
 */

import type { SnapshotState } from '../contracts/snapshot.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { StartFilters } from '../queue/start-filters.js'
import type { DelayedPosts } from '../timers/delayed-posts.js'

/** A message handed over by its holder: taken out, about to get its outcome. */
export interface HeldMessage {
  readonly m: Envelope
  /** What a snapshot records it as. */
  readonly state: SnapshotState
  /** Clock time it was due (delayed, backing off); overdue ones: −∞. */
  readonly dueAt?: number
}

/** A stage holding accepted messages that are not running: a stop, a cancel and a search use it. */
export interface Holder {
  /** Messages held now. */
  readonly size: number
  /** Takes every message out (none is left to act on), in no particular order. */
  takeAll(): HeldMessage[]
  /** The held message with post number `seq`, if this holder has it. */
  find(seq: number): Envelope | undefined
  /**
   * Takes `m` out (a cancel) with the queue place and key it kept; its outcome is the caller's
   * (a delayed message's cancel records it). False when this holder does not have `m`.
   */
  remove(m: Envelope): boolean
}

/** Every holder of one loop, by what it holds. */
export interface LoopHolders {
  /** Failed messages backing off before a retry. */
  readonly retries: Holder
  /** Messages held by their route's open circuit breaker. */
  readonly breakers: Holder
  /** Messages waiting for a rate limit. */
  readonly limits: Holder
  /** Delayed messages, scheduled or overdue. */
  readonly delayed: Holder
  /** Ready, parked and unparked messages. */
  readonly queue: Holder
}

/** The holders in the order a stop takes them over. */
export function holderList(h: LoopHolders): readonly Holder[] {
  return [h.retries, h.breakers, h.limits, h.delayed, h.queue]
}

/**
 * Takes every message out of every holder, each marked handed over before any gets its outcome: an
 * outcome's listener that cancels another of them finds it gone (`'unknown'`), instead of ending it a
 * second time.
 */
export function handOverAll(holders: readonly Holder[]): HeldMessage[] {
  const all: HeldMessage[] = []
  for (const holder of holders) for (const h of holder.takeAll()) all.push(h)
  for (const h of all) h.m.where = Where.HandedOver
  return all
}

/** The ready, parked and unparked messages of the run queue. */
export function queueHolder(queue: RunQueue): Holder {
  return {
    // The queue's length counts held and backing-off messages too (they keep their places).
    get size() {
      return queue.length - queue.away - queue.held - queue.limited
    },
    takeAll: () => queue.clear().map((m) => ({ m, state: 'queued' as const })),
    find: (seq) => queue.find(seq),
    remove: (m) => queue.remove(m),
  }
}

/** A stage that keeps messages in their queue places while they wait there (a breaker, a rate limit). */
export interface HoldingStage {
  /** Messages it keeps now. */
  readonly held: number
  /** Takes every kept message out. */
  clear(): Envelope[]
  find(seq: number): Envelope | undefined
  /** Takes `m` out; false when it does not keep `m`. */
  remove(m: Envelope): boolean
}

/** The run queue's side of a hold. */
export type HoldQueue = Pick<RunQueue, 'markHeld' | 'markLimited' | 'resume' | 'forget'>

/**
 * A circuit breaker's or a rate limit's hold on the messages its stage keeps: the one writer of their
 * queue places and key holds, and of the queue's start filter for its kind. It marks a message kept
 * when its stage takes it ({@link QueueHold.enter}), puts it back to compete when the stage lets it
 * go ({@link QueueHold.leave}), and forgets its place and key when a stop or a cancel takes it out
 * (the {@link Holder} port).
 */
export class QueueHold implements Holder {
  readonly #stage: HoldingStage
  readonly #queue: HoldQueue
  readonly #starts: StartFilters
  readonly #kind: 'breaker' | 'limit'

  /**
   * @param stage - the stage that keeps the messages
   * @param queue - the run queue
   * @param starts - the run queue's start filters
   * @param kind - a breaker's hold (`held` in a snapshot) or a rate limit's (`queued` in a snapshot)
   */
  constructor(stage: HoldingStage, queue: HoldQueue, starts: StartFilters, kind: 'breaker' | 'limit') {
    this.#stage = stage
    this.#queue = queue
    this.#starts = starts
    this.#kind = kind
  }

  /** From now on the queue asks `keeps` before a message starts (once: the first filter stays). */
  filterStarts(keeps: (m: Envelope) => boolean): void {
    this.#starts.set(this.#kind, keeps)
  }

  /** The stage kept `m` as it would start: it stays counted in the queue's length and keeps its key. */
  enter(m: Envelope): void {
    if (this.#kind === 'breaker') this.#queue.markHeld(m)
    else this.#queue.markLimited(m)
  }

  /** The stage let `m` go: it competes by urgency again, still holding its key. */
  leave(m: Envelope): void {
    this.#queue.resume(m)
  }

  get size(): number {
    return this.#stage.held
  }

  takeAll(): HeldMessage[] {
    const state = this.#kind === 'breaker' ? 'held' : 'queued'
    return this.#stage.clear().map((m) => {
      this.#queue.forget(m) // the key it kept moves on
      return { m, state }
    })
  }

  find(seq: number): Envelope | undefined {
    return this.#stage.find(seq)
  }

  remove(m: Envelope): boolean {
    if (!this.#stage.remove(m)) return false
    this.#queue.forget(m) // the key it kept moves on
    return true
  }
}

/** Delayed messages, scheduled or overdue (due while the queue was full). */
export function delayedHolder(delayed: DelayedPosts): Holder {
  return {
    get size() {
      return delayed.length
    },
    takeAll: () => delayed.takeAll(true).map(({ m, dueAt }) => ({ m, state: 'delayed' as const, dueAt })),
    find: (seq) => delayed.find(seq),
    remove: (m) => delayed.cancelMessage(m), // through its handle: the outcome `cancelled` is recorded there
  }
}
