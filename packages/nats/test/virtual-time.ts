/**
 * Virtual time against a real server: the loop's clock is core's `VirtualClock`, driven by the test;
 * the server keeps real time (`ack_wait`, `nak` delays), so a driver lets it answer between steps.
 */
import { type Clock, type TimerHandle, VirtualClock } from '@flowing/core'

/** A clock the test drives: a {@link VirtualClock}, or one that wraps it. */
export interface DrivenClock extends Clock {
  advance(ms: number): Promise<void>
}

/**
 * A {@link VirtualClock} that can also freeze: `freeze(ms)` moves its readings on without firing a
 * timer — what a process stopped by `SIGSTOP`, or a handler that blocks the event loop, looks like to
 * the code that reads the clock. Its timers then fire late, as they would after the thaw.
 */
export class FreezableClock implements DrivenClock {
  readonly #virtual = new VirtualClock()
  #frozen = 0

  now(): number {
    return this.#virtual.now() + this.#frozen
  }
  wallNow(): number {
    return this.#virtual.wallNow() + this.#frozen
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.#virtual.setTimeout(fn, ms)
  }
  clearTimeout(handle: TimerHandle): void {
    this.#virtual.clearTimeout(handle)
  }
  setImmediate(fn: () => void): void {
    this.#virtual.setImmediate(fn)
  }
  advance(ms: number): Promise<void> {
    return this.#virtual.advance(ms)
  }
  /** `ms` pass and no timer fires meanwhile. */
  freeze(ms: number): void {
    this.#frozen += ms
  }
}

// A real millisecond between steps, for the server's answers: virtual time runs about `stepMs` times
// faster than real time while driven, so no lease can lapse behind the server's back.
const letServerAnswer = () => new Promise((resolve) => setTimeout(resolve, 1))

/**
 * Advances `clock` `stepMs` at a time until `done()` holds.
 * @throws after `maxMs` of virtual time
 */
export async function driveUntil(
  clock: DrivenClock,
  done: () => boolean,
  { stepMs = 10, maxMs = 600_000 }: { stepMs?: number; maxMs?: number } = {},
): Promise<void> {
  for (let driven = 0; !done(); driven += stepMs) {
    if (driven > maxMs) throw new Error(`not done after ${maxMs} ms of virtual time`)
    await clock.advance(stepMs)
    await letServerAnswer()
  }
}

/** Advances `clock` until `work` settles; returns what it resolves with. */
export async function drive<T>(clock: DrivenClock, work: Promise<T>, options?: { stepMs?: number }): Promise<T> {
  let settled = false
  const watched = work.finally(() => {
    settled = true
  })
  watched.catch(() => {})
  await driveUntil(clock, () => settled, options)
  return watched
}
