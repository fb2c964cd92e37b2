import type { Envelope } from '../internal/envelope.js'
import { Ring } from '../internal/ring.js'
import { MAX_PRIORITY } from '../priority.js'
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

  /** @param urgency - the rank order (aging) */
  constructor(urgency: Urgency) {
    this.#urgency = urgency
    for (let p = 0; p <= MAX_PRIORITY; p++) this.#levels.push(new Ring<Envelope>(16))
  }

  get length(): number {
    return this.#length
  }

  push(m: Envelope): void {
    ;(this.#levels[m.priority] as Ring<Envelope>).push(m)
    this.#nonEmpty |= 1 << m.priority
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
    if (ring.length === 0) this.#nonEmpty &= ~(1 << level)
    this.#length--
    return m
  }

  // The level whose head runs first, or -1 when empty.
  #bestLevel(): number {
    let bits = this.#nonEmpty
    if (bits === 0) return -1
    let best = 31 - Math.clz32(bits & -bits) // lowest set bit: most urgent level
    bits &= bits - 1
    if (bits === 0) return best
    const urgency = this.#urgency
    let head = (this.#levels[best] as Ring<Envelope>).peek() as Envelope
    let headRank = urgency.rank(head)
    while (bits !== 0) {
      const level = 31 - Math.clz32(bits & -bits)
      bits &= bits - 1
      const candidate = (this.#levels[level] as Ring<Envelope>).peek() as Envelope
      const rank = urgency.rank(candidate)
      if (rank < headRank || (rank === headRank && candidate.order < head.order)) {
        best = level
        head = candidate
        headRank = rank
      }
    }
    return best
  }
}
