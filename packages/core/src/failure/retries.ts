/**
 * Messages backing off before a retry, on the loop's timing wheel. While it waits, a retry keeps its
 * place in the queue (the capacity counts it, so a retry is never refused for room) and, when it is
 * ordered and keyed, its key — later messages of the key park behind it (I2 across retries). This
 * class is the one writer of those two holds: it takes them when a message starts backing off, and
 * gives them up when the message re-enters, is cancelled or is handed over by a stop.
 *
 * ```
 *  failed attempt ─▶ backOff ─(wheel)─▶ due ─▶ queue (resume | reenter) ─▶ pump ─▶ pool
 *  restored retry ─▶ restored ─┘          cancel · takeAll: the place and the key go with it
 * ```
 *
 * @module
 */
import type { DeadlineScheduler } from '@flowing/watchdog'
import { type Envelope, Where } from '../internal/envelope.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { HeldMessage, Holder } from '../shutdown/holders.js'
import { DelayedPosts } from '../timers/delayed-posts.js'

/** What the retries tell the rest of the loop. */
export interface RetryPorts {
  /** Whether a retry of `m` keeps its key (keyed, ordered policy). */
  ordered(m: Envelope): boolean
  /** `m` is back in the queue (its trace, its `requeued` event). */
  requeued(m: Envelope, now: number): void
  /** Messages entered the queue: the pool should pump. */
  pump(): void
  /** The time an entry into the queue is stamped with (the loop's shared entry clock). */
  now(): number
}

/** The retries backing off: a holder that owns their queue places and key holds. */
export class Retries implements Holder {
  readonly #queue: RunQueue
  readonly #ports: RetryPorts
  readonly #waiting: DelayedPosts

  /**
   * @param wheel - the loop's timing wheel
   * @param queue - the run queue whose places and keys they hold
   * @param ports - what they tell the rest of the loop
   */
  constructor(wheel: DeadlineScheduler<Envelope>, queue: RunQueue, ports: RetryPorts) {
    this.#queue = queue
    this.#ports = ports
    const enterDue = (m: Envelope) => {
      this.#reenter(m) // it kept its place in the queue: no room needed
      return true
    }
    this.#waiting = new DelayedPosts(wheel, { enterDue, cancelled: () => {} }, Where.Backoff)
  }

  /** Retries backing off now. */
  get size(): number {
    return this.#waiting.length
  }

  /** The journal records each wait (a restart resumes it). */
  journalTo(journal: { timed(m: Envelope, dueAt: number): void; touch(m: Envelope): void }): void {
    this.#waiting.journalTo(journal)
  }

  /**
   * A failed attempt of `m` backs off until `dueAt`: its key, claimed while it ran, stays claimed
   * for an ordered retry and goes for an unordered one.
   */
  backOff(m: Envelope, dueAt: number): void {
    if (m.key !== undefined) {
      if (this.#ports.ordered(m)) this.#queue.keepKey(m)
      else this.#queue.release(m.key)
    }
    this.#hold(m, dueAt)
  }

  /** A restored retry backs off again until `dueAt`: it takes its place and claims its key (ordered). */
  restored(m: Envelope, dueAt: number): void {
    if (this.#ports.ordered(m)) this.#queue.claimKey(m) // later messages of its key wait, as before
    this.#hold(m, dueAt)
  }

  /** The wheel says `m` is due. */
  due(m: Envelope): void {
    this.#waiting.due(m)
  }

  /** The clock time `m` backs off until, or undefined when it is not backing off. */
  dueOf(m: Envelope): number | undefined {
    return this.#waiting.dueOf(m)
  }

  /** The retry with post number `seq`, if one backs off. */
  find(seq: number): Envelope | undefined {
    return this.#waiting.find(seq)
  }

  /** Takes `m` out (a cancel): its place and key go with it. */
  remove(m: Envelope): boolean {
    if (!this.#waiting.cancelMessage(m)) return false
    this.#letGo(m)
    return true
  }

  /** Takes every retry out (a stop): places and keys go with them. */
  takeAll(): HeldMessage[] {
    return this.#waiting.takeAll(true).map(({ m, dueAt }) => {
      this.#letGo(m)
      return { m, state: 'retry-scheduled' as const, dueAt }
    })
  }

  #hold(m: Envelope, dueAt: number): void {
    this.#queue.keepPlace()
    this.#waiting.schedule(m, dueAt)
  }

  #letGo(m: Envelope): void {
    this.#queue.forget(m) // an ordered retry's key moves on
    this.#queue.releasePlace()
  }

  // Due: back in the queue — an ordered retry ahead of its key's later messages, an unordered one
  // behind what arrived meanwhile (never back at the head of the queue).
  #reenter(m: Envelope): void {
    const queue = this.#queue
    const now = this.#ports.now()
    queue.releasePlace()
    if (this.#ports.ordered(m)) queue.resume(m)
    else {
      m.postedAt = now
      queue.reenter(m)
    }
    this.#ports.requeued(m, now)
    this.#ports.pump()
  }
}
