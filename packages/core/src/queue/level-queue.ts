import { MAX_PRIORITY } from '../contracts/priority.js'
import type { Envelope } from '../internal/envelope.js'
import { Ring } from '../internal/ring.js'
import type { ReadyQueue } from './ready-queue.js'
import type { Urgency } from './urgency.js'

/**
 * One FIFO per priority level. With linear aging every level stays FIFO (ranks grow with post time), so
 * the most urgent message is the best of at most ten heads: push and shift are O(1) — no
 * pointer-chasing sift through a million-deep heap.
 *
 * ```
 *  level 0  [m7 m9]            ← heads compared by (rank, seq)
 *  level 5  [m1 m2 m3 m8]      ← a bitmask skips empty levels
 *  level 9  [m4]               ← evictLowest() takes this head
 * ```
 */
export class LevelQueue implements ReadyQueue {
  readonly #levels: Ring<Envelope>[] = []
  // Bit p set ⇔ level p is non-empty.
  #nonEmpty = 0
  #length = 0
  readonly #urgency: Urgency
  // Rank and entry order of each non-empty level's head, written whenever a head changes: picking the
  // best level compares ten numbers in two typed arrays and touches no envelope (with a million queued,
  // each envelope read is a cache miss).
  readonly #headRank = new Float64Array(MAX_PRIORITY + 1)
  readonly #headOrder = new Float64Array(MAX_PRIORITY + 1)

  /** @param urgency - the rank order (aging) */
  constructor(urgency: Urgency) {
    this.#urgency = urgency
    for (let p = 0; p <= MAX_PRIORITY; p++) this.#levels.push(new Ring<Envelope>(16))
  }

  get length(): number {
    return this.#length
  }

  push(m: Envelope): void {
    const level = m.priority
    const ring = this.#levels[level] as Ring<Envelope>
    if (ring.length === 0) this.#setHead(level, m)
    ring.push(m)
    this.#nonEmpty |= 1 << level
    this.#length++
  }

  peek(): Envelope | undefined {
    const level = this.#bestLevel()
    return level < 0 ? undefined : (this.#levels[level] as Ring<Envelope>).peek()
  }

  shift(): Envelope | undefined {
    const level = this.#bestLevel()
    return level < 0 ? undefined : this.#take(level)
  }

  evictLowest(minPriority: number): Envelope | undefined {
    if (this.#nonEmpty === 0) return undefined
    const lowest = 31 - Math.clz32(this.#nonEmpty) // highest set bit: least urgent non-empty level
    return lowest >= minPriority ? this.#take(lowest) : undefined
  }

  *values(): Iterable<Envelope> {
    for (const level of this.#levels) yield* level
  }

  #take(level: number): Envelope | undefined {
    const ring = this.#levels[level] as Ring<Envelope>
    const m = ring.shift()
    const next = ring.peek()
    if (next === undefined) this.#nonEmpty &= ~(1 << level)
    else this.#setHead(level, next)
    this.#length--
    return m
  }

  #setHead(level: number, m: Envelope): void {
    this.#headRank[level] = this.#urgency.rank(m)
    this.#headOrder[level] = m.order
  }

  // The level whose head runs first, or -1 when empty.
  #bestLevel(): number {
    let bits = this.#nonEmpty
    if (bits === 0) return -1
    let best = 31 - Math.clz32(bits & -bits) // lowest set bit: most urgent level
    bits &= bits - 1
    if (bits === 0) return best
    const ranks = this.#headRank
    const orders = this.#headOrder
    let bestRank = ranks[best] as number
    while (bits !== 0) {
      const level = 31 - Math.clz32(bits & -bits)
      bits &= bits - 1
      const rank = ranks[level] as number
      if (rank < bestRank || (rank === bestRank && (orders[level] as number) < (orders[best] as number))) {
        best = level
        bestRank = rank
      }
    }
    return best
  }
}
