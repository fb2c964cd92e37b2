/**
 * The contents of every slot as two parallel vectors — node indices (`Int32Array`) and their
 * deadlines (`Float64Array`) — rather than a linked list of nodes. Cascading and firing walk a slot
 * sequentially, reading only these vectors, so the CPU streams them instead of chasing one pointer
 * (one full memory latency) per timer; the node records are only written.
 *
 * Cancelling leaves a tombstone (index -1), which keeps schedule order within a slot and touches no
 * other node. Tombstones go when the slot is walked, when it empties, or when a push finds the
 * vectors full and at least half dead (compacted instead of grown) — so vectors never hold more than
 * twice the live entries they needed room for, and a cancel never pays for moving other nodes.
 *
 * @internal
 * @module
 */
import type { NodePool } from './node-pool.js'

/** The index of a cancelled or fired entry. */
export const TOMBSTONE = -1
const NO_INDICES = new Int32Array(0)
const NO_DEADLINES = new Float64Array(0)
/**
 * Vector sizes are powers of two from 2^3; spares are pooled per size up to 2^6 entries — the
 * lowest level's slots, which every cascade refills. Larger vectors are left to the GC.
 */
const MIN_CLASS = 3
const MAX_CLASS = 6
/** Spare entries kept at most, all sizes together: 2^15 × 12 B = 384 KiB. */
const SPARE_BUDGET = 1 << 15

/** Index and deadline vectors per slot, with entry and live counts. */
export class SlotVectors {
  readonly #indices: Int32Array[]
  readonly #deadlines: Float64Array[]
  // Entries per slot, tombstones included; live entries per slot.
  readonly #length: Int32Array
  readonly #live: Int32Array
  // First entry not yet fired (a level-0 slot fired in part keeps its vectors), and whether the
  // live entries are in deadline order: kept by push(), so firing never scans to find out.
  readonly #head: Int32Array
  readonly #sorted: Uint8Array
  // Emptied vector pairs kept for slots that fill up again, per size class: cascading refills the
  // lower levels' slots every time a higher slot comes due, and allocating (and collecting) two
  // typed arrays per growth step would dominate the cost of a cascade.
  readonly #spareIndices: Int32Array[][] = Array.from({ length: MAX_CLASS + 1 }, () => [])
  readonly #spareDeadlines: Float64Array[][] = Array.from({ length: MAX_CLASS + 1 }, () => [])
  #spareEntries = 0
  /** The vectors the last {@link SlotVectors.take} returned, and their length. */
  takenIndices: Int32Array = NO_INDICES
  takenDeadlines: Float64Array = NO_DEADLINES
  taken = 0

  /** @param count - number of slots */
  constructor(count: number) {
    this.#indices = Array.from({ length: count }, () => NO_INDICES)
    this.#deadlines = Array.from({ length: count }, () => NO_DEADLINES)
    this.#length = new Int32Array(count)
    this.#live = new Int32Array(count)
    this.#head = new Int32Array(count)
    this.#sorted = new Uint8Array(count).fill(1)
  }

  /** First entry of slot `s` not yet fired. */
  head(s: number): number {
    return this.#head[s] as number
  }

  /** True when the live entries of slot `s` are in deadline order (ties in schedule order). */
  isSorted(s: number): boolean {
    return this.#sorted[s] === 1
  }

  /** Live entries of slot `s`. */
  live(s: number): number {
    return this.#live[s] as number
  }

  /** Entries of slot `s`, tombstones included. */
  length(s: number): number {
    return this.#length[s] as number
  }

  /** The node indices of slot `s` (-1 = tombstone), read-only. */
  indices(s: number): Int32Array {
    return this.#indices[s] as Int32Array
  }

  /** The deadlines of slot `s`, parallel to its indices, read-only. */
  deadlines(s: number): Float64Array {
    return this.#deadlines[s] as Float64Array
  }

  /** Appends node `x` due at `deadline` to slot `s`; true when the slot was empty before. */
  push(s: number, x: number, deadline: number, pool: NodePool<unknown>): boolean {
    if (this.#length[s] === (this.#indices[s] as Int32Array).length) this.#makeRoom(s, pool)
    const at = this.#length[s] as number
    const deadlines = this.#deadlines[s] as Float64Array
    if (at > (this.#head[s] as number) && deadline < (deadlines[at - 1] as number)) this.#sorted[s] = 0
    ;(this.#indices[s] as Int32Array)[at] = x
    deadlines[at] = deadline
    pool.setWhere(x, s, at)
    this.#length[s] = at + 1
    const live = this.#live[s] as number
    this.#live[s] = live + 1
    return live === 0
  }

  /** Removes the entry at `position` of slot `s`; true when the slot is now empty. */
  remove(s: number, position: number): boolean {
    // No compaction here: it would move (touch) other nodes, a cache miss each, on the cancel path.
    ;(this.#indices[s] as Int32Array)[position] = TOMBSTONE
    const live = (this.#live[s] as number) - 1
    this.#live[s] = live
    if (live > 0) return false
    this.#empty(s)
    return true
  }

  /**
   * Records that entries before `head` of slot `s` were consumed, `fired` of them live (the caller
   * wrote their tombstones). Returns true when the slot is now empty.
   */
  consume(s: number, head: number, fired: number): boolean {
    const live = (this.#live[s] as number) - fired
    this.#live[s] = live
    this.#head[s] = head
    if (live > 0) return false
    this.#empty(s)
    return true
  }

  /** Puts the live entries of slot `s` in deadline order, ties in schedule (= vector) order. */
  sort(s: number, pool: NodePool<unknown>): void {
    const indices = this.#indices[s] as Int32Array
    const deadlines = this.#deadlines[s] as Float64Array
    const order: number[] = []
    for (let j = this.#head[s] as number, n = this.#length[s] as number; j < n; j++) {
      if ((indices[j] as number) !== TOMBSTONE) order.push(j)
    }
    order.sort((a, b) => (deadlines[a] as number) - (deadlines[b] as number) || a - b)
    const nodes = order.map((j) => indices[j] as number)
    const due = order.map((j) => deadlines[j] as number)
    for (let k = 0; k < nodes.length; k++) {
      indices[k] = nodes[k] as number
      deadlines[k] = due[k] as number
      pool.setPosition(nodes[k] as number, k)
    }
    this.#length[s] = nodes.length
    this.#head[s] = 0
    this.#sorted[s] = 1
  }

  /**
   * Empties slot `s`, exposing its old vectors as {@link SlotVectors.takenIndices} /
   * {@link SlotVectors.takenDeadlines} (length {@link SlotVectors.taken}): the caller walks them,
   * skipping tombstones, then hands them back to {@link SlotVectors.recycle}.
   */
  take(s: number): void {
    this.takenIndices = this.#indices[s] as Int32Array
    this.takenDeadlines = this.#deadlines[s] as Float64Array
    this.taken = this.#length[s] as number
    this.#indices[s] = NO_INDICES
    this.#deadlines[s] = NO_DEADLINES
    this.#length[s] = 0
    this.#live[s] = 0
    this.#head[s] = 0
    this.#sorted[s] = 1
  }

  /** Keeps walked vectors for a slot that fills up again, within the spare budget. */
  recycle(indices: Int32Array, deadlines: Float64Array): void {
    const size = indices.length
    const sizeClass = 31 - Math.clz32(size)
    if (size === 0 || sizeClass > MAX_CLASS || this.#spareEntries + size > SPARE_BUDGET) return
    this.#spareIndices[sizeClass]?.push(indices)
    this.#spareDeadlines[sizeClass]?.push(deadlines)
    this.#spareEntries += size
  }

  /** Empties every slot. */
  reset(): void {
    this.#indices.fill(NO_INDICES)
    this.#deadlines.fill(NO_DEADLINES)
    this.#length.fill(0)
    this.#live.fill(0)
    this.#head.fill(0)
    this.#sorted.fill(1)
  }

  /** Empties slot `s`, handing its vectors back rather than keeping them in a slot that may never be visited again. */
  #empty(s: number): void {
    this.recycle(this.#indices[s] as Int32Array, this.#deadlines[s] as Float64Array)
    this.#indices[s] = NO_INDICES
    this.#deadlines[s] = NO_DEADLINES
    this.#length[s] = 0
    this.#head[s] = 0
    this.#sorted[s] = 1
  }

  /** Makes room for one more entry in full slot `s`: compacts if half is tombstones, else grows ×2. */
  #makeRoom(s: number, pool: NodePool<unknown>): void {
    const length = this.#length[s] as number
    if (length > 0 && (this.#live[s] as number) <= length >> 1) {
      this.#compact(s, pool)
      return
    }
    const old = this.#indices[s] as Int32Array
    const oldDeadlines = this.#deadlines[s] as Float64Array
    const sizeClass = old.length === 0 ? MIN_CLASS : 32 - Math.clz32(old.length)
    let indices = this.#spareIndices[sizeClass]?.pop()
    let deadlines = this.#spareDeadlines[sizeClass]?.pop()
    if (indices === undefined || deadlines === undefined) {
      indices = new Int32Array(2 ** sizeClass)
      deadlines = new Float64Array(2 ** sizeClass)
    } else this.#spareEntries -= indices.length
    if (length > 0) {
      indices.set(old.subarray(0, length))
      deadlines.set(oldDeadlines.subarray(0, length))
    }
    this.recycle(old, oldDeadlines)
    this.#indices[s] = indices
    this.#deadlines[s] = deadlines
  }

  /** Squeezes the tombstones out of slot `s`, keeping order, and updates the moved nodes' positions. */
  #compact(s: number, pool: NodePool<unknown>): void {
    const indices = this.#indices[s] as Int32Array
    const deadlines = this.#deadlines[s] as Float64Array
    const length = this.#length[s] as number
    let to = 0
    for (let from = 0; from < length; from++) {
      const x = indices[from] as number
      if (x === TOMBSTONE) continue
      if (to !== from) {
        indices[to] = x
        deadlines[to] = deadlines[from] as number
        pool.setPosition(x, to)
      }
      to++
    }
    this.#length[s] = to
    this.#head[s] = 0
  }
}
