/**
 * The clock contract: the time source and timer provider every stage asks, so tests can pass a
 * virtual one (`VirtualClock`) and nothing in the loop reads the wall clock itself.
 *
 * @module
 */

/**
 * An opaque handle returned by {@link Clock.setTimeout}.
 *
 * @group Clocks
 */
export type TimerHandle = unknown

/**
 * The time source and timer provider every Flowing component uses.
 *
 * @remarks `now()` must never go backwards: aging keys and queue-wait figures rely on it.
 *
 * @group Clocks
 */
export interface Clock {
  /** Milliseconds on a monotonic timeline (fractional allowed). */
  now(): number
  /** Runs `fn` once after at least `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle
  /** Cancels a pending {@link Clock.setTimeout}; harmless on a fired or cleared handle. */
  clearTimeout(handle: TimerHandle): void
  /** Runs `fn` on a later turn of the event loop, after pending I/O (used to yield). */
  setImmediate(fn: () => void): void
  /**
   * Wall-clock time, ms since the Unix epoch: what dead letters and attempt records carry besides the
   * monotonic readings, so they still mean something after a restart or in another process.
   * @defaultValue `Date.now()` when a clock does not have it
   */
  wallNow?(): number
}
