/**
 * The time posts are stamped with: one clock reading shared by a synchronous burst of posts — read
 * again after {@link POSTS_PER_READING} posts, and as soon as the burst's synchronous run ends (the
 * first microtask after it) — so a burst pays one reading per 64 posts instead of one each (a reading
 * costs 60–75 ns on this project's machines, about a tenth of a message's whole cost).
 *
 * What it costs in accuracy: a post's time is the reading taken at one of the 64 posts before it (or
 * at itself) in the same synchronous run, never later than its own post. A message may look older than
 * it is by the time those posts took — about 20–60 µs back to back (`docs/guides/performance.md`
 * states the measured figure) — which the aging bound and the queue-wait histogram carry as their
 * tolerance. Deadlines, back-offs, delays and rate-limit windows read the clock themselves.
 *
 * @module
 */

import type { Clock } from '../contracts/clock.js'

/** Posts one reading serves at most. */
export const POSTS_PER_READING = 64

const SETTLED = Promise.resolve()

/** The shared reading (see the module comment). */
export class PostClock {
  readonly #clock: Clock
  #reading = 0
  // Posts the reading may still serve; 0: read again.
  #left = 0
  // An expiry is queued for the end of the synchronous run.
  #armed = false
  readonly #expire = (): void => {
    this.#left = 0
    this.#armed = false
  }

  /**
   * @param clock - the loop's clock
   */
  constructor(clock: Clock) {
    this.#clock = clock
  }

  /** The time to stamp a post with. */
  now(): number {
    if (this.#left > 0) {
      this.#left--
      return this.#reading
    }
    this.#reading = this.#clock.now()
    this.#left = POSTS_PER_READING - 1
    if (!this.#armed) {
      this.#armed = true
      void SETTLED.then(this.#expire)
    }
    return this.#reading
  }
}
