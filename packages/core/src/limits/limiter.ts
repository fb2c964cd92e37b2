/**
 * One budget of the rate-limit stage: its sliding window, the messages waiting for it (by urgency),
 * and its wake-up on the timing wheel.
 *
 * @module
 */
import { Heap } from 'heap-js'
import type { RateLimitScope, RateRule } from '../contracts/flow.js'
import type { LimitLoad } from '../contracts/inspection.js'
import type { RetryAfterScope } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import { SlidingWindow } from './rate-limit.js'
import { THROTTLE_WINDOW_MS, Throttle } from './throttle.js'

/** The urgency order of waiting messages. */
export type Order = (a: Envelope, b: Envelope) => number

/** One budget: its window, its waiting messages, its wake-up on the wheel. */
export class Limiter {
  readonly name: string
  readonly scope: RateLimitScope | 'retry-after'
  readonly window: SlidingWindow
  // A route (or a key's or group's share of it) slowed by a `RateLimitError`: what sets the window's allowance.
  readonly throttle: Throttle | undefined
  /** For a pause: whose messages it holds (the `RateLimitError`'s scope). */
  readonly retryAfterScope: RetryAfterScope | undefined
  timer = -1
  wakeAt = Number.POSITIVE_INFINITY
  /**
   * Booked starts alone fill it, so no time is known at which it frees: the first of them to be
   * entered arms the wake-up (instead of a timer now).
   */
  stalled = false
  // The messages waiting for it, by urgency: made at the first wait (most budgets never fill).
  #lane: Heap<Envelope> | undefined = undefined
  readonly #compare: Order
  // The rule's `max` (1 for a pause), before a share divides it.
  readonly #max: number

  /**
   * @param rule - the budget's rule; none for a pause and its throttle (made at its first 429, at `now`)
   * @param retryAfterScope - for a pause: whose messages it holds
   */
  constructor(
    name: string,
    scope: RateLimitScope | 'retry-after',
    rule: RateRule | undefined,
    compare: Order,
    now = 0,
    retryAfterScope?: RetryAfterScope,
  ) {
    this.name = name
    this.scope = scope
    this.retryAfterScope = retryAfterScope
    this.#max = rule?.max ?? 1
    this.window = new SlidingWindow(this.#max, rule?.perMs ?? THROTTLE_WINDOW_MS)
    this.throttle = rule === undefined ? new Throttle(this.window, now) : undefined
    this.#compare = compare
  }

  /**
   * This process is one of `processes` that share the budget's downstream: it allows ⌊max / processes⌋
   * starts per window (at least one). A budget per key is not divided: a key runs in one process.
   */
  share(processes: number): void {
    if (this.scope === 'key' || this.throttle !== undefined) return
    this.window.resize(Math.max(1, Math.floor(this.#max / processes)))
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

  /** What `loop.inspect()` shows of it at `now`. */
  load(now: number): LimitLoad {
    const { name, scope, window, waiting } = this
    const until = scope === 'retry-after' && window.pausedUntil > now ? window.pausedUntil : undefined
    return { name, scope, max: window.max, windowMs: window.perMs, used: window.used(now), waiting, until }
  }

  /** Nothing waits, no wake-up is armed, nothing booked or recorded still counts: it can be forgotten. */
  idle(now: number): boolean {
    return this.waiting === 0 && this.timer === -1 && this.window.idle(now)
  }
}
