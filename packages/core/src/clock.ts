import type { Clock, TimerHandle } from './contracts/clock.js'

/**
 * Time, behind an interface. Flowing never calls `Date.now()` or `setTimeout` in its logic: it asks a
 * {@link Clock}. Production uses {@link systemClock} (monotonic); tests pass a {@link VirtualClock} and
 * advance time explicitly, so nothing sleeps and every run is deterministic.
 *
 * @module
 */

/**
 * The wall-clock time (ms since the epoch) of `clock`, or `Date.now()` for a clock without one.
 *
 * @group Clocks
 */
export function wallNow(clock: Clock): number {
  return clock.wallNow === undefined ? Date.now() : clock.wallNow()
}

/**
 * The real clock: `performance.now()` for time, Node's timers for callbacks.
 *
 * @group Clocks
 */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  setImmediate: (fn) => {
    setImmediate(fn)
  },
  wallNow: () => Date.now(),
}

interface VirtualTimer {
  readonly at: number
  readonly seq: number
  readonly fn: () => void
  cancelled: boolean
}

/** Lets pending promise callbacks and real immediates run, without wall-clock sleeping. */
function realTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * A deterministic clock for tests: time moves only when told.
 *
 * @remarks Timers fire in (due time, creation order); `setImmediate` is a zero-delay virtual timer, so
 * a loop that yields on a budget is still driven only by {@link VirtualClock.advance} / {@link
 * VirtualClock.run}: after `dispatchBudget` handler starts in one turn, a loop on a virtual clock
 * dispatches nothing more until the test advances or runs the clock (and `await loop.drain()` alone
 * would wait forever) — drive the clock, e.g. `const drained = loop.drain(); await clock.run(); await drained`. Between timers the clock lets real microtasks settle, so `async` handlers that
 * await `clock.sleep()` behave as they would in production.
 *
 * @example
 * ```ts
 * const clock = new VirtualClock()
 * const loop = createLoop<Messages>({ clock })
 * loop.post('order.paid', { orderId: 'o-1', amount: 1 })
 * await clock.run() // fires every timer, lets every handler finish
 * ```
 *
 * @group Clocks
 */
export class VirtualClock implements Clock {
  // The virtual "now"; only advance() moves it.
  #now: number
  // Pending timers; small in tests, so a sorted scan beats a heap in clarity.
  #timers: VirtualTimer[] = []
  // Creation order, the tiebreak for timers due at the same instant.
  #seq = 0

  // The wall-clock time at virtual time 0.
  readonly #epochMs: number

  /**
   * @param start - the initial time in ms (default 0)
   * @param epochMs - the wall-clock time (ms since the epoch) at virtual time 0: fixed, so wall
   * timestamps are deterministic too
   * @defaultValue epochMs: `Date.UTC(2026, 0, 1)`
   */
  constructor(start = 0, epochMs = Date.UTC(2026, 0, 1)) {
    this.#now = start
    this.#epochMs = epochMs
  }

  /** The virtual wall-clock time: `epochMs + now()`. */
  wallNow(): number {
    return this.#epochMs + this.#now
  }

  /** The current virtual time in ms. */
  now(): number {
    return this.#now
  }

  /** Schedules `fn` at `now + ms` virtual milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: VirtualTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false }
    this.#timers.push(timer)
    return timer
  }

  /** Cancels a timer created by {@link VirtualClock.setTimeout}. */
  clearTimeout(handle: TimerHandle): void {
    const timer = handle as VirtualTimer | undefined
    if (timer && typeof timer === 'object') timer.cancelled = true
  }

  /** A zero-delay virtual timer. */
  setImmediate(fn: () => void): void {
    this.setTimeout(fn, 0)
  }

  /** A promise resolved after `ms` virtual milliseconds — the virtual `sleep` for test handlers. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms))
  }

  /** Number of timers still pending. */
  get pending(): number {
    return this.#timers.reduce((n, t) => (t.cancelled ? n : n + 1), 0)
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way in order, and letting real
   * microtasks settle after each one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms
    await realTurn()
    for (let timer = this.#nextDue(target); timer; timer = this.#nextDue(target)) {
      this.#now = Math.max(this.#now, timer.at)
      timer.fn()
      await realTurn()
    }
    this.#now = Math.max(this.#now, target)
  }

  /**
   * Fires timers in order until none is left (or `maxTimers` fired, to stop runaway tests), letting
   * microtasks settle in between.
   *
   * @returns the number of timers fired
   */
  async run(maxTimers = 1_000_000): Promise<number> {
    let fired = 0
    await realTurn()
    for (let timer = this.#nextDue(Number.POSITIVE_INFINITY); timer; timer = this.#nextDue(Number.POSITIVE_INFINITY)) {
      if (++fired > maxTimers) throw new Error(`VirtualClock.run(): more than ${maxTimers} timers fired`)
      this.#now = Math.max(this.#now, timer.at)
      timer.fn()
      await realTurn()
    }
    return fired
  }

  #nextDue(limit: number): VirtualTimer | undefined {
    this.#timers = this.#timers.filter((t) => !t.cancelled)
    let best: VirtualTimer | undefined
    for (const t of this.#timers) {
      if (t.at <= limit && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t
    }
    if (best) best.cancelled = true
    return best
  }
}
