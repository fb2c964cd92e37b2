/**
 * The loop-backs: the few edges that run against the build order, where a stage built early must
 * reach one built after it. They are declared here once, as narrow ports, and bound once every stage
 * exists ({@link LoopBacks.bind}); a call before that is an internal error, never a silent no-op.
 *
 * ```
 *  early stage               ──loop-back──▶   later stage
 *  hand-back's deadline      cutOff           the stopper
 *  the failure stage         failureExit      the stopper
 *  the dead-letter store     replay           the ways in (a replay is a new post)
 *  a request that gave up    cancel           per-message cancel
 *  the delayed posts         enterDue         admission (a due message enters under the policy)
 *  the delayed posts         cameDue          the schedules (a fire posts the next one)
 *  the pressure gauge        onPressure       pacing (producers waiting for room)
 *  the watchdog              detach           the pool (a timed-out attempt leaves its slot)
 *  admission, retries, …     schedulePump     the pool's next pass (one microtask per burst)
 *  stall, cancels            running          the pool's attempts
 *  admission, pacing         load             queue, pool, pacing (what overload errors report)
 *  the outcomes              workLeft         queue, pool, delayed posts, retries (is the loop idle?)
 *  the outcomes              succeeded        the failure stage (breakers, failure exit, trace)
 *  the timing wheel          due              each due item's owner: the watchdog, a rate limit,
 *                                             the retries, the delayed posts
 * ```
 *
 * @module
 */
import type { PressureTransition } from '@flowing/backpressure'
import { type Attempt, Watchdog } from '@flowing/watchdog'
import type { DeadLetter, FailureExitReport } from '../contracts/failures.js'
import type { MessageMap } from '../contracts/message.js'
import type { QueueLoad } from '../errors.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { Limiter } from '../limits/limiter.js'
import type { AttemptContext } from '../pool/attempt-context.js'

const RESOLVED = Promise.resolve()

// The targets of loop-backs not bound yet: reading any of them throws (a plain field read per call
// once bound, where a getter with a check would run per message).
const UNBOUND: object = new Proxy(
  {},
  {
    get() {
      throw new Error('Flowing internal error: a loop-back ran before the loop was built')
    },
  },
)

/** The stages the loop-backs reach, bound at the end of construction. */
export interface LoopBackTargets<M extends MessageMap> {
  readonly stopper: { cutOff(): void; failureExit(report: FailureExitReport): void }
  readonly entries: { replay(letter: DeadLetter, throws: boolean): unknown }
  readonly cancels: { cancel(m: Envelope, why: string, reason?: unknown): unknown }
  readonly admission: { enterDue(m: Envelope): boolean }
  readonly pacing: { onPressure(transition: PressureTransition): void; readonly waiting: number }
  readonly failures: {
    succeeded(m: Envelope, attempt: number, startedAt: number, now: number): void
    readonly retries: { readonly size: number; due(m: Envelope): void }
  }
  readonly watchdog: { onDue(attempt: Attempt): void }
  readonly limits: { due(limiter: Limiter, now: number): void }
  readonly queue: { readonly length: number }
  readonly delayed: { readonly overdue: number; due(m: Envelope): void }
  readonly schedules: { cameDue(m: Envelope): void }
  readonly pool: {
    readonly running: number
    pump(): void
    attempts(): AttemptContext<M>[]
    detach(which: (ctx: AttemptContext<M>) => boolean, error: unknown, hold: boolean): boolean
  }
}

/** The loop-backs of one loop (see the module). */
export class LoopBacks<M extends MessageMap> {
  readonly #clock: { now(): number }
  readonly #capacity: number
  // The bound stages; until bound, an object any read of which is a loud internal error.
  #to: LoopBackTargets<M> = UNBOUND as LoopBackTargets<M>
  // A pump is queued on the microtask queue; posts in one synchronous burst share it.
  #pumpScheduled = false
  readonly #pumpNow = (): void => {
    this.#pumpScheduled = false
    this.#to.pool.pump()
  }

  /**
   * @param clock - the loop's clock (a rate limit's wake-up is dated on it)
   * @param capacity - the loop's `capacity` (the load reports it)
   */
  constructor(clock: { now(): number }, capacity: number) {
    this.#clock = clock
    this.#capacity = capacity
  }

  /** Binds every loop-back, once, when the last stage exists. */
  bind(targets: LoopBackTargets<M>): void {
    if (this.#to !== UNBOUND) throw new Error('Flowing internal error: the loop-backs are bound twice')
    this.#to = targets
  }

  /** Schedules the pool's next pass: one resolved-promise hop per synchronous burst (~3× cheaper than `queueMicrotask`). */
  readonly schedulePump = (): void => {
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    RESOLVED.then(this.#pumpNow)
  }

  /** The attempts running now. */
  readonly running = (): AttemptContext<M>[] => this.#to.pool.attempts()
  /** A stop's deadline passed. */
  readonly cutOff = (): void => this.#to.stopper.cutOff()
  /** The failure rate passed the `failureExit` threshold. */
  readonly failureExit = (report: FailureExitReport): void => this.#to.stopper.failureExit(report)
  /** Replays a dead letter as a new post. */
  readonly replay = (letter: DeadLetter): unknown => this.#to.entries.replay(letter, false)
  /** Cancels a waiting or running message (`reason`: what its running handler's signal says). */
  readonly cancel = (m: Envelope, why: string, reason?: unknown): unknown => this.#to.cancels.cancel(m, why, reason)
  /** A delayed message came due: a schedule's fire posts the next one. */
  readonly cameDue = (m: Envelope): void => this.#to.schedules.cameDue(m)
  /** A delayed message came due: it enters under the overflow policy in force; false: no room yet. */
  readonly enterDue = (m: Envelope): boolean => this.#to.admission.enterDue(m)
  /** The pressure level changed. */
  readonly onPressure = (transition: PressureTransition): void => this.#to.pacing.onPressure(transition)
  /** The queue's load, as overload errors and metrics report it. */
  readonly load = (): QueueLoad => {
    const { queue, pool, pacing } = this.#to
    return { queued: queue.length, capacity: this.#capacity, running: pool.running, waitingProducers: pacing.waiting }
  }
  /** Whether work is left outside the outcomes: queued, running, overdue or backing off. */
  readonly workLeft = (): boolean => {
    const { queue, pool, delayed, failures } = this.#to
    return queue.length > 0 || pool.running > 0 || delayed.overdue > 0 || failures.retries.size > 0
  }
  /** A success reaches the failure stage (breakers, the failure-exit window, the trace). */
  readonly succeeded = (m: Envelope, attempt: number, startedAt: number, now: number): void => {
    this.#to.failures.succeeded(m, attempt, startedAt, now)
  }
  /** The wheel's due items, each to its owner, one line per kind. */
  readonly due = (items: readonly (Envelope | Attempt | Limiter)[]): void => {
    const { watchdog, limits, failures, delayed } = this.#to
    for (const item of items) {
      if (Watchdog.owns(item)) watchdog.onDue(item)
      else if (item instanceof Limiter) limits.due(item, this.#clock.now())
      else if (item.where === Where.Backoff) failures.retries.due(item)
      else if (item.where === Where.Delayed) delayed.due(item)
      // else: cancelled or handed back by a listener of an earlier item of this batch
    }
  }
  /** A handler deadline passed: its attempt leaves its slot. */
  readonly timedOut = (attempt: Attempt, error: unknown): void => {
    this.#to.pool.detach((ctx) => ctx.guard === attempt, error, true)
  }
}
