/**
 * The rate-limit stage: budgets per loop, type, route, key and group, and the pauses a downstream's
 * retry-after (`RateLimitError`) puts on a route, a key or a group (`./pauses.ts`). A message over a
 * budget waits in its budget's lane — counted in the queue, its key kept claimed so its key's order
 * holds, no worker held — and other work flows past it; the lane's head is woken on the timing wheel
 * when the budget frees.
 *
 * ```
 *  take ─▶ loop budgets open? ─no─▶ nothing starts; the wheel wakes the pump when one frees
 *           └─yes─▶ every budget of the message has room? ─no─▶ its lane (Limited) ─(wheel)─▶ queue
 *                    └─yes─▶ booked in each budget ─▶ begin ─▶ handler called ─▶ entered: counts from now
 * ```
 *
 * A start counts from its handler's entry, not from its take: a slot is booked when the message is
 * taken (it counts from then on, so nothing else takes it) and stamped with a reading taken once the
 * handler was called (`entered`), so a `started` listener, an async ledger claim, middleware or a GC
 * pause in between cannot let `max + 1` handler entries into one window (the proof is on
 * `SlidingWindow`). A start whose handler is never called counts from its attempt's end.
 *
 * @module
 */
import type { DeadlineScheduler } from '@flowing/watchdog'
import { Heap } from 'heap-js'
import type { RateLimitHold, RateLimitScope, RateRule } from '../contracts/flow.js'
import type { LimitLoad } from '../contracts/inspection.js'
import type { MessageKey } from '../contracts/message.js'
import type { RetryAfterScope } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import { Budgets } from './budgets.js'
import { Limiter, type Order } from './limiter.js'
import { Pauses, pauseHold } from './pauses.js'
import { SlidingWindow } from './rate-limit.js'
import type { Booking, Bookings } from './rate-limit-hold.js'
import { THROTTLE_WINDOW_MS, Throttle } from './throttle.js'

/** What the stage asks of the loop. */
export interface LimitHost {
  /** A waiting message leaves the queue's sight (`Where.Limited`), keeping its key. */
  hold(m: Envelope): void
  /** A waiting message may run again: it competes by urgency, still holding its key. */
  release(m: Envelope): void
  /** A message started to wait (the `rate-limited` event). */
  limited(m: Envelope, hold: RateLimitHold): void
  /** Released messages or a freed loop budget: the pool should pump. */
  pump(): void
  /** Budgets now exist (a `RateLimitError` paused a route): every start must be checked. */
  enable(): void
  /** The budgets of a message type (the loop's and the type's, loop-wide ones excluded). */
  rulesOf(type: string): readonly RateRule[]
  /** The group of a message, if it has one, and its group's budgets. */
  groupOf(m: Envelope): string | undefined
  groupRules(group: string): readonly RateRule[]
}

/** The budgets of one loop. */
export class RateLimits implements Bookings {
  readonly #host: LimitHost
  readonly #wheel: DeadlineScheduler<Limiter>
  readonly #loop: Limiter[]
  // The rules' budgets; the pauses a `RateLimitError` made.
  readonly #budgets: Budgets
  readonly #pauses: Pauses
  readonly #heldBy = new Map<Envelope, Limiter>()
  // Forget idle budgets (per key, per group) once the table doubles.
  #sweepAt = 1024
  #holds = 0
  // Scratch: the budgets of the message being checked (reused, never kept).
  readonly #scratch: Limiter[] = []
  // The booking of the start just taken, until the attempt that begins it claims it.
  #bookedFor: Envelope | undefined = undefined
  #booking: Booking | undefined = undefined

  /**
   * @param loopRules - the loop-wide budgets (`per: 'loop'`)
   */
  constructor(host: LimitHost, wheel: DeadlineScheduler<Limiter>, compare: Order, loopRules: readonly RateRule[]) {
    this.#host = host
    this.#wheel = wheel
    this.#budgets = new Budgets(compare)
    this.#pauses = new Pauses(compare)
    this.#loop = loopRules.map((r) => new Limiter(`loop:${r.max}/${r.perMs}ms`, 'loop', r, compare))
  }

  /** Messages waiting for a budget now. */
  get held(): number {
    return this.#heldBy.size
  }

  /** Times a message had to wait for a budget. */
  get holds(): number {
    return this.#holds
  }

  /** Whether a loop-wide budget exists (then {@link RateLimits.open} gates every start). */
  get gated(): boolean {
    return this.#loop.length > 0
  }

  /** The loop-wide budgets have room at `now`; otherwise the wheel wakes the pump when they do. */
  open(now: number): boolean {
    for (const l of this.#loop) {
      const at = l.window.nextAt(now)
      if (at > now) {
        this.#arm(l, at)
        return false
      }
    }
    return true
  }

  /**
   * `m` would start at `now`: true when one of its budgets is full (it now waits in that budget's
   * lane); otherwise the start is booked in every budget it has (see {@link RateLimits.claim}) and false.
   */
  mustHold(m: Envelope, now: number): boolean {
    const budgets = this.#budgetsOf(m, now)
    for (const l of budgets) {
      const at = l.window.nextAt(now)
      if (at > now) {
        budgets.length = 0
        this.#wait(m, l, at, now)
        return true
      }
    }
    for (const l of budgets) l.window.book()
    for (const l of this.#loop) l.window.book()
    this.#bookedFor = m
    this.#booking = budgets.length === 0 ? this.#loop : [...budgets, ...this.#loop]
    budgets.length = 0
    return false
  }

  /**
   * The booking of `m`'s start, taken just now (none when it booked nothing): the attempt that begins
   * it keeps it and hands it to {@link RateLimits.entered} once the handler was called.
   */
  claim(m: Envelope): Booking | undefined {
    if (this.#bookedFor !== m) return undefined
    const booking = this.#booking
    this.#bookedFor = undefined
    this.#booking = undefined
    return booking
  }

  /**
   * The handler of a booked start was entered before `now` (or never will be: its attempt ended): its
   * starts count from `now` on in each budget, and a budget its booked starts alone filled gets its
   * wake-up.
   */
  entered(booking: Booking, now: number): void {
    for (const l of booking) {
      l.window.enter(now)
      if (!l.stalled) continue
      l.stalled = false
      this.#arm(l, l.window.nextAt(now))
    }
  }

  /**
   * A handler of `m` threw a `RateLimitError` of `scope`: the route — or `m`'s key, or its group, on
   * that route — pauses until `now + retryAfterMs` and is throttled from then on (see
   * `./throttle.ts`), and `m` waits first in line for the pause to end (no attempt consumed).
   */
  backOff(m: Envelope, retryAfterMs: number, now: number, scope: RetryAfterScope = 'route'): void {
    this.#host.enable()
    const l = this.#pauses.pause(this.#routeOf(m), scope, m.key, this.#host.groupOf(m), retryAfterMs, now)
    this.#wait(m, l, l.window.pausedUntil, now, retryAfterMs)
  }

  /** `route` (`type` or `type/routeKey`) pauses as a route-scope 429 would, with no message of its own. */
  pause(route: string, retryAfterMs: number, now: number): void {
    this.#host.enable()
    this.#pauses.pause(route, 'route', undefined, undefined, retryAfterMs, now)
  }

  /**
   * This process is one of `processes` sharing the downstreams: each budget but those per key allows
   * its share (see `Limiter.share`); messages waiting for a budget that grew are looked at again.
   */
  share(processes: number, now: number): void {
    this.#budgets.share(processes)
    for (const l of this.#loop) l.share(processes)
    for (const l of [...this.#budgets.all(), ...this.#loop]) if (l.waiting > 0) this.#arm(l, l.window.nextAt(now))
    this.#host.pump()
  }

  /** A budget's wake-up is due (from the wheel): as many waiting messages as it has room for go back. */
  due(l: Limiter, now: number): void {
    l.timer = -1
    l.wakeAt = Number.POSITIVE_INFINITY
    l.throttle?.step(now, l.waiting)
    const room = l.window.free(now)
    for (let i = 0; i < room && l.waiting > 0; i++) this.#release(l.lane.pop() as Envelope)
    // The released messages take the room (they start at the next pump): wake when more frees.
    if (l.waiting > 0) this.#arm(l, room > 0 ? l.window.nextWhenFull(now) : l.window.nextAt(now))
    this.#host.pump()
  }

  /**
   * What `loop.inspect()` shows at `now`: the loop-wide budgets, every pause, and each other budget not
   * idle (starts counting, messages waiting, a wake-up armed). O(budgets); nothing is changed.
   */
  loads(now: number): LimitLoad[] {
    const out = this.#loop.map((l) => l.load(now))
    for (const l of this.#pauses.all()) out.push(l.load(now))
    for (const l of this.#budgets.all()) if (!l.idle(now)) out.push(l.load(now))
    return out
  }

  /** The waiting message with post number `seq`, if any. */
  find(seq: number): Envelope | undefined {
    for (const m of this.#heldBy.keys()) if (m.seq === seq) return m
    return undefined
  }

  /** Removes a waiting message (cancelled); false when it is not waiting here. */
  remove(m: Envelope): boolean {
    const l = this.#heldBy.get(m)
    if (l === undefined) return false
    this.#heldBy.delete(m)
    l.lane.remove(m)
    return true
  }

  /** Removes every waiting message and every wake-up (a stop). */
  clear(): Envelope[] {
    const held: Envelope[] = []
    for (const m of this.#heldBy.keys()) held.push(m)
    this.#heldBy.clear()
    const all = [...this.#pauses.all(), ...this.#budgets.all(), ...this.#loop]
    for (const l of all) {
      if (l.waiting > 0) l.lane.clear()
      if (l.timer !== -1) this.#wheel.remove(l.timer)
      l.timer = -1
    }
    return held
  }

  #wait(m: Envelope, l: Limiter, at: number, now: number, retryAfterMs?: number): void {
    l.lane.add(m)
    this.#heldBy.set(m, l)
    this.#holds++
    this.#host.hold(m) // first: a listener may call back into the loop
    this.#arm(l, at)
    // Booked starts alone fill it: they count for a window from their entries, at `now` at the earliest.
    const until = at === Number.POSITIVE_INFINITY ? now + l.window.perMs : at
    const t = l.throttle
    if (t === undefined) this.#host.limited(m, { limit: l.name, scope: l.scope, until })
    else {
      t.waited()
      this.#host.limited(m, pauseHold(l, until, t.allowance, retryAfterMs))
    }
  }

  #release(m: Envelope): void {
    this.#heldBy.delete(m)
    this.#host.release(m)
  }

  #arm(l: Limiter, time: number): void {
    // A throttle's allowance may grow at its next step: its waiting messages are looked at then.
    const step = l.throttle?.nextStep ?? time
    const at = step < time && step > l.window.pausedUntil ? step : time
    if (at === Number.POSITIVE_INFINITY) {
      l.stalled = true // armed by the first of its booked starts to be entered
      return
    }
    if (l.timer !== -1) {
      if (l.wakeAt <= at) return
      this.#wheel.remove(l.timer)
    }
    l.wakeAt = at
    l.timer = this.#wheel.add(at, l)
  }

  // The budgets a message is under (the scratch array: emptied by the caller).
  #budgetsOf(m: Envelope, now: number): Limiter[] {
    if (this.#budgets.size + this.#pauses.size >= this.#sweepAt) this.#sweep(now) // first: a budget in `out` must stay
    const out = this.#scratch
    const group = this.#host.groupOf(m)
    if (this.#pauses.size > 0) this.#pauses.collect(this.#routeOf(m), m.key, group, now, out)
    for (const rule of this.#host.rulesOf(m.type)) {
      const of = rule.per === 'type' ? m.type : rule.per === 'route' ? this.#routeOf(m) : m.key
      if (of !== undefined) out.push(this.#budgets.of(rule, of))
    }
    if (group !== undefined) for (const rule of this.#host.groupRules(group)) out.push(this.#budgets.of(rule, group))
    return out
  }

  #routeOf(m: Envelope): string {
    return m.routeKey === undefined ? m.type : `${m.type}/${m.routeKey}`
  }

  // Budgets with nothing waiting, no wake-up and nothing booked or recorded that still counts go.
  #sweep(now: number): void {
    this.#budgets.sweep(now)
    this.#pauses.sweep(now)
    this.#sweepAt = Math.max(1024, 2 * (this.#budgets.size + this.#pauses.size))
  }
}
