/**
 * Linear aging as a *static* key.
 *
 * A message posted at `t` with priority `p` has rank `t + p × agingMs`; lower rank runs first, post
 * order (`seq`) breaks ties. Because the rank never changes while the message waits, aging needs no
 * re-heapify, and within one priority level ranks grow with post time — so each level is a plain FIFO.
 *
 * **The bound (BRIEF I3).** A message `m` (posted at `t`, priority `p`) is overtaken by a more urgent
 * `m'` (posted at `t'`, priority `p' < p`) only if `t' + p'·a < t + p·a`, i.e. `t' − t < a·(p − p')`.
 * So no message is ever overtaken by one posted `agingMs × Δpriority` or more later. With
 * `agingMs = Infinity` priorities are strict; with `agingMs = 0` the queue is FIFO.
 */

import { MAX_PRIORITY } from '../contracts/priority.js'
import type { Envelope } from '../internal/envelope.js'

/** Orders envelopes by (rank, entry order). */
export class Urgency {
  // Weight of post time in the rank: 0 disables aging (strict priority).
  readonly #timeWeight: number
  // Milliseconds of waiting worth one priority level.
  readonly #levelWeight: number

  /** @param agingMs - ms of waiting worth one priority level; `Infinity` for strict priority */
  constructor(agingMs: number) {
    // Strict also when `priority × agingMs` would overflow to Infinity and flatten every level into one.
    const strict = !Number.isFinite(agingMs * MAX_PRIORITY)
    this.#timeWeight = strict ? 0 : 1
    this.#levelWeight = strict ? 1 : agingMs
  }

  /** The static rank: lower runs first. */
  rank(m: Envelope): number {
    return m.postedAt * this.#timeWeight + m.priority * this.#levelWeight
  }

  /** Negative when `a` runs before `b`. */
  readonly compare = (a: Envelope, b: Envelope): number => this.rank(a) - this.rank(b) || a.order - b.order
}
