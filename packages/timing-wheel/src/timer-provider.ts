/**
 * The real-time side of the driver, behind an interface: a clock and one-shot timers. Structurally
 * compatible with `@flowing/core`'s `Clock`, so a loop can hand its clock (real or virtual) to a
 * {@link WheelDriver} and one time source drives both.
 *
 * @module
 */

/**
 * A clock plus one-shot timers: what a {@link WheelDriver} needs from the outside world.
 *
 * @remarks `now()` must be monotonic (never go backwards) and on the same timeline as the deadlines
 * you schedule. `setTimeout` may fire early or late — the driver checks `now()` before delivering.
 *
 * @group Driver
 */
export interface TimerProvider {
  /** Milliseconds on a monotonic timeline (fractional allowed), never negative. */
  now(): number
  /** Runs `fn` once after about `ms` milliseconds; returns a handle for {@link TimerProvider.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown
  /** Cancels a pending timer; harmless on a fired or cleared handle. */
  clearTimeout(handle: unknown): void
  /**
   * Runs `fn` on a later turn of the event loop, after pending I/O. Used to continue a delivery cut
   * short by the budget; without it the driver uses `setTimeout(fn, 0)`.
   */
  setImmediate?(fn: () => void): void
}

/**
 * The real timers: `performance.now()` for time, Node's `setTimeout` / `setImmediate` for callbacks.
 *
 * @group Driver
 */
export const systemTimers: TimerProvider = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  setImmediate: (fn) => {
    setImmediate(fn)
  },
}
