/**
 * The rate-limit stage: budgets per loop, type, route, key and group, and the pauses a downstream's
 * retry-after (`RateLimitError`) puts on a route. A message over a budget waits in its budget's lane
 * — counted in the queue, its key kept claimed so its key's order holds, no worker held — and other
 * work flows past it; the lane's head is woken on the timing wheel when the budget frees.
 *
 * ```
 *  take ─▶ loop budgets open? ─no─▶ nothing starts; the wheel wakes the pump when one frees
 *           └─yes─▶ every budget of the message has room? ─no─▶ its lane (Limited) ─(wheel)─▶ queue
 *                    └─yes─▶ recorded in each budget ─▶ runs
 * ```
 *
 * @module
 */
import type { DeadlineScheduler } from '@flowing/watchdog'
import { Heap } from 'heap-js'
import type { RateLimitHold, RateLimitScope, RateRule } from '../contracts/flow.js'
import type { MessageKey } from '../contracts/message.js'
import type { Envelope } from '../internal/envelope.js'
import { SlidingWindow } from './rate-limit.js'
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

/** One budget: its window, its waiting messages, its wake-up on the wheel. */
export class Limiter {
  readonly name: string
  readonly scope: RateLimitScope | 'retry-after'
  readonly window: SlidingWindow
  // A route slowed by a `RateLimitError`: what sets the window's allowance.
  readonly throttle: Throttle | undefined
  timer = -1
  wakeAt = Number.POSITIVE_INFINITY
  // The messages waiting for it, by urgency: made at the first wait (most budgets never fill).
  #lane: Heap<Envelope> | undefined = undefined
  readonly #compare: Order

  /** @param rule - the budget's rule; none for a route's throttle (made at its first 429, at `now`) */
  constructor(
    name: string,
    scope: RateLimitScope | 'retry-after',
    rule: RateRule | undefined,
    compare: Order,
    now = 0,
  ) {
    this.name = name
    this.scope = scope
    this.window = new SlidingWindow(rule?.max ?? 1, rule?.perMs ?? THROTTLE_WINDOW_MS)
    this.throttle = rule === undefined ? new Throttle(this.window, now) : undefined
    this.#compare = compare
  }

  /** Messages waiting for it. */
  get waiting(): number {
    return this.#lane?.length ?? 0
  }

  /** Its waiting messages (made on first use). */
  get lane(): Heap<Envelope> {
    this.#lane ??= new Heap<Envelope>(this.#compare)
    return this.#lane
  }

  /** Nothing waits, no wake-up is armed, nothing recorded still counts: it can be forgotten. */
  idle(now: number): boolean {
    return this.waiting === 0 && this.timer === -1 && this.window.idle(now)
  }
}

// A rule's budgets by what they are per (a type, a route, a key, a group).
type Table = Map<unknown, Limiter>

type Order = (a: Envelope, b: Envelope) => number

/** The budgets of one loop. */
export class RateLimits {
  readonly #host: LimitHost
  readonly #wheel: DeadlineScheduler<Limiter>
  readonly #compare: Order
  readonly #loop: Limiter[]
  // Each rule's budgets, by rule id; the routes a `RateLimitError` paused.
  readonly #tables = new Map<number, Table>()
  readonly #pauses = new Map<string, Limiter>()
  #size = 0
  readonly #heldBy = new Map<Envelope, Limiter>()
  // Forget idle budgets (per key, per group) once the table doubles.
  #sweepAt = 1024
  #holds = 0
  // Scratch: the budgets of the message being checked (reused, never kept).
  readonly #scratch: Limiter[] = []

  /**
   * @param loopRules - the loop-wide budgets (`per: 'loop'`)
   */
  constructor(host: LimitHost, wheel: DeadlineScheduler<Limiter>, compare: Order, loopRules: readonly RateRule[]) {
    this.#host = host
    this.#wheel = wheel
    this.#compare = compare
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
   * lane); otherwise the start is recorded in every budget it has and false.
   */
  mustHold(m: Envelope, now: number): boolean {
    const budgets = this.#budgetsOf(m, now)
    for (const l of budgets) {
      const at = l.window.nextAt(now)
      if (at > now) {
        budgets.length = 0
        this.#wait(m, l, at)
        return true
      }
    }
    for (const l of budgets) l.window.record(now)
    for (const l of this.#loop) l.window.record(now)
    budgets.length = 0
    return false
  }

  /**
   * A handler of `m` threw a `RateLimitError`: its route pauses until `now + retryAfterMs` and is
   * throttled from then on (see `./throttle.ts`), and `m` waits first in line for the pause to end
   * (no attempt consumed).
   */
  backOff(m: Envelope, retryAfterMs: number, now: number): void {
    this.#host.enable()
    const route = this.#routeOf(m)
    let l = this.#pauses.get(route)
    if (l === undefined) {
      l = new Limiter(`retry-after:${route}`, 'retry-after', undefined, this.#compare, now)
      this.#pauses.set(route, l)
    } else l.throttle?.refused(now)
    l.window.pausedUntil = Math.max(l.window.pausedUntil, now + retryAfterMs)
    this.#wait(m, l, l.window.pausedUntil)
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
    const all = [...this.#pauses.values(), ...this.#loop]
    for (const table of this.#tables.values()) for (const l of table.values()) all.push(l)
    for (const l of all) {
      if (l.waiting > 0) l.lane.clear()
      if (l.timer !== -1) this.#wheel.remove(l.timer)
      l.timer = -1
    }
    return held
  }

  #wait(m: Envelope, l: Limiter, until: number): void {
    l.lane.add(m)
    this.#heldBy.set(m, l)
    this.#holds++
    this.#host.hold(m) // first: a listener may call back into the loop
    this.#arm(l, until)
    const t = l.throttle
    if (t === undefined) this.#host.limited(m, { limit: l.name, scope: l.scope, until })
    else {
      t.waited()
      this.#host.limited(m, { limit: l.name, scope: l.scope, until, perSecond: t.allowance })
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
    if (l.timer !== -1) {
      if (l.wakeAt <= at) return
      this.#wheel.remove(l.timer)
    }
    l.wakeAt = at
    l.timer = this.#wheel.add(at, l)
  }

  // The budgets a message is under (the scratch array: emptied by the caller).
  #budgetsOf(m: Envelope, now: number): Limiter[] {
    if (this.#size >= this.#sweepAt) this.#sweep(now) // first: a budget in `out` must stay
    const out = this.#scratch
    if (this.#pauses.size > 0) {
      const route = this.#routeOf(m)
      const pause = this.#pauses.get(route)
      if (pause !== undefined && !this.#retired(route, pause, now)) out.push(pause)
    }
    for (const rule of this.#host.rulesOf(m.type)) {
      const of = rule.per === 'type' ? m.type : rule.per === 'route' ? this.#routeOf(m) : m.key
      if (of !== undefined) out.push(this.#limiter(rule, of))
    }
    const group = this.#host.groupOf(m)
    if (group !== undefined) for (const rule of this.#host.groupRules(group)) out.push(this.#limiter(rule, group))
    return out
  }

  // A throttle that nothing waited for for a while goes (true): its route flows freely again.
  #retired(route: string, l: Limiter, now: number): boolean {
    if (!(l.throttle as Throttle).step(now, l.waiting) || l.waiting > 0 || l.timer !== -1) return false
    this.#pauses.delete(route)
    return true
  }

  #routeOf(m: Envelope): string {
    return m.routeKey === undefined ? m.type : `${m.type}/${m.routeKey}`
  }

  // The budget of `rule` for what it is per (`of`: a type, a route, a key, a group).
  #limiter(rule: RateRule, of: unknown): Limiter {
    let table = this.#tables.get(rule.id)
    if (table === undefined) {
      table = new Map()
      this.#tables.set(rule.id, table)
    }
    let l = table.get(of)
    if (l === undefined) {
      const name = `${rule.per}:${typeof of === 'number' ? `#${of}` : String(of)}`
      l = new Limiter(name, rule.per, rule, this.#compare)
      table.set(of, l)
      this.#size++
    }
    return l
  }

  // Budgets with nothing waiting, no wake-up and nothing recorded that still counts go.
  #sweep(now: number): void {
    for (const table of this.#tables.values()) {
      for (const [of, l] of table) {
        if (!l.idle(now)) continue
        table.delete(of)
        this.#size--
      }
    }
    for (const [route, l] of this.#pauses) this.#retired(route, l, now)
    this.#sweepAt = Math.max(1024, 2 * this.#size)
  }
}
