/**
 * Wall-clock times of monotonic readings, for records users read as dates (an attempt's
 * `startedAtEpochMs`): the offset between the two clocks is read again once the monotonic one moved a
 * millisecond — the wall clock counts whole milliseconds anyway — or after 64 uses, not at every
 * message.
 *
 * @module
 */

import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'

/** The offset cache (see the module comment). */
export class WallTimes {
  readonly #clock: Clock
  // wallNow − now, read at #readAt (monotonic time), and uses left before it is read again anyway
  // (a clock whose `now()` stands still must not pin the wall clock).
  #offset = 0
  #readAt = Number.NEGATIVE_INFINITY
  #uses = 0

  /**
   * @param clock - the loop's clock
   */
  constructor(clock: Clock) {
    this.#clock = clock
  }

  /** The wall-clock time (ms since the epoch) of the monotonic reading `reading`, given `now`. */
  epochMsOf(reading: number, now: number): number {
    if (!(now - this.#readAt < 1 && now >= this.#readAt && --this.#uses > 0)) {
      this.#offset = wallNow(this.#clock) - now
      this.#readAt = now
      this.#uses = 64
    }
    return reading + this.#offset
  }
}
