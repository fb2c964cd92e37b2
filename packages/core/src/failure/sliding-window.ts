/**
 * A time-bucketed sliding window of events, each a hit or a miss: O(1) per record, fixed memory.
 *
 * @module
 */

const BUCKETS = 10

/**
 * Counts events in the last `windowMs` (to within one bucket of `windowMs / 10`): how many, and how
 * many of them were hits (failures, for a breaker). Fixed memory whatever the rate.
 */
export class SlidingWindow {
  readonly #bucketMs: number
  // Ring of buckets: the absolute bucket index each slot holds, its event count and its hits.
  readonly #index = new Float64Array(BUCKETS).fill(-1)
  readonly #events = new Float64Array(BUCKETS)
  readonly #hits = new Float64Array(BUCKETS)

  /** @param windowMs - the window's length (ms, > 0) */
  constructor(windowMs: number) {
    this.#bucketMs = windowMs / BUCKETS
  }

  /** Records one event at clock time `now`. */
  record(now: number, hit: boolean): void {
    const bucket = Math.floor(now / this.#bucketMs)
    const slot = bucket % BUCKETS
    if (this.#index[slot] !== bucket) {
      this.#index[slot] = bucket
      this.#events[slot] = 0
      this.#hits[slot] = 0
    }
    this.#events[slot] = (this.#events[slot] as number) + 1
    if (hit) this.#hits[slot] = (this.#hits[slot] as number) + 1
  }

  /** Events in the window ending at `now`. */
  events(now: number): number {
    return this.#sum(now, this.#events)
  }

  /** Hits in the window ending at `now`. */
  hits(now: number): number {
    return this.#sum(now, this.#hits)
  }

  /** Forgets everything. */
  reset(): void {
    this.#index.fill(-1)
  }

  #sum(now: number, values: Float64Array): number {
    const current = Math.floor(now / this.#bucketMs)
    let sum = 0
    for (let slot = 0; slot < BUCKETS; slot++) {
      const b = this.#index[slot] as number
      if (b > current - BUCKETS && b <= current) sum += values[slot] as number
    }
    return sum
  }
}
