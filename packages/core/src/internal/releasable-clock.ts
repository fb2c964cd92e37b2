/**
 * A {@link Clock} that can let go of the process: once released, no timer it made or makes keeps
 * Node's event loop alive.
 *
 * @module
 */
import { wallNow } from '../clock.js'
import type { Clock, TimerHandle } from '../contracts/clock.js'

/**
 * Wraps the loop's clock for the timers a stopped loop may still hold — the wheel's (grace periods of
 * timed-out handlers that never settle, compensation deadlines) and the pool's stall check. After
 * {@link ReleasableClock.release} they still fire if something else keeps the process alive, but
 * they no longer keep it alive themselves (Node's `unref()`; a clock whose handles have no `unref`,
 * such as `VirtualClock`, is unaffected).
 *
 * @remarks Tracks the timers pending, to unref them at release: two at most for a loop (the wheel
 * keeps one real timer, the stall check one), so a `Set` costs nothing that matters. Each
 * `setTimeout` wraps its callback in one closure: the wheel re-arms per wake-up, not per message.
 */
export class ReleasableClock implements Clock {
  readonly #clock: Clock
  #released = false
  // Handles made and neither fired nor cleared: what release() must unref.
  readonly #pending = new Set<TimerHandle>()

  /** @param clock - the clock every call goes to */
  constructor(clock: Clock) {
    this.#clock = clock
  }

  /** The wrapped clock's time. */
  now(): number {
    return this.#clock.now()
  }

  /** The wrapped clock's wall-clock time. */
  wallNow(): number {
    return wallNow(this.#clock)
  }

  /** A timer of the wrapped clock; unref'd at once after {@link ReleasableClock.release}. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (this.#released) {
      const handle = this.#clock.setTimeout(fn, ms)
      unref(handle)
      return handle
    }
    const handle = this.#clock.setTimeout(() => {
      this.#pending.delete(handle)
      fn()
    }, ms)
    this.#pending.add(handle)
    return handle
  }

  /** Cancels a timer made by {@link ReleasableClock.setTimeout}. */
  clearTimeout(handle: TimerHandle): void {
    this.#pending.delete(handle)
    this.#clock.clearTimeout(handle)
  }

  /** The wrapped clock's `setImmediate` (it runs on the next turn: it never holds the process long). */
  setImmediate(fn: () => void): void {
    this.#clock.setImmediate(fn)
  }

  /** From now on no timer of this clock keeps the process alive: pending ones are unref'd, new ones too. */
  release(): void {
    this.#released = true
    for (const handle of this.#pending) unref(handle)
    this.#pending.clear()
  }
}

function unref(handle: TimerHandle): void {
  const fn = (handle as { unref?: unknown } | null)?.unref
  if (typeof fn === 'function') fn.call(handle)
}
