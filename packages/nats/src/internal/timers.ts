/**
 * The transport's timers, all on the loop's clock: a repeating one (the lease heartbeat, the gap
 * watch, the stream-fill reading) and a pause (polling, back-off). A `Clock` has no interval, so a
 * repeating timer re-arms itself; a real one never keeps the process alive by itself.
 *
 * @module
 */
import type { Clock, TimerHandle } from '@flowing/core'

/**
 * Calls `fn` every `ms` on `clock` until the returned function is called. Each turn is armed before
 * `fn` runs, so a late turn (a blocked event loop) does not shift the ones after it by more than its
 * own lateness, and `fn` may stop the ticker.
 */
export function every(clock: Clock, ms: number, fn: () => void): () => void {
  let handle: TimerHandle
  let stopped = false
  const arm = (): void => {
    handle = clock.setTimeout(() => {
      if (stopped) return
      arm()
      fn()
    }, ms)
    unref(handle)
  }
  arm()
  return () => {
    stopped = true
    clock.clearTimeout(handle)
  }
}

/** Resolves after `ms` on `clock`. */
export function pause(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms))
}

// A periodic timer is bookkeeping, not work: on the system clock it must not hold the process open
// (a `VirtualClock`'s handles have no `unref`).
function unref(handle: TimerHandle): void {
  const fn = (handle as { unref?: unknown } | null)?.unref
  if (typeof fn === 'function') fn.call(handle)
}

/** `work`, or nothing once `ms` passed on `clock` (what it then does is no longer waited for). */
export function within(clock: Clock, ms: number, work: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(resolve, ms)
    work.finally(() => {
      clock.clearTimeout(timer)
      resolve()
    })
  })
}
