/**
 * The shape of the wheel — levels of `SLOTS` slots — and one occupancy bitmap per level, plus a
 * bitmask of non-empty levels. Finding the next non-empty slot is a few word operations per level,
 * so catching up over any stretch of empty time costs nothing per empty slot (the Linux 2016
 * timer-wheel rework and tokio do the same with 64-bit words).
 *
 * @internal
 * @module
 */

/**
 * log2 of the slots per level. 256 slots (tokio has 64) mean delays up to 65 s cascade once instead
 * of twice — measured: 1M timers over 60 s fire in ~160 ns each instead of ~290 ns.
 */
export const SLOT_BITS = 8
/** Slots per level. */
export const SLOTS = 1 << SLOT_BITS
/**
 * Levels: a slot of level `i` is `SLOTS^i` ticks wide; together the levels span at least 2^54 ticks —
 * every delay up to `Number.MAX_SAFE_INTEGER` ms at the default 1 ms tick. Deadlines beyond the top
 * level's current block (finer ticks, or clocks far from zero) wait in one overflow list.
 */
export const LEVELS = Math.ceil(54 / SLOT_BITS)
/** Sentinel of the overflow list; the level slots are `0 … LEVELS × SLOTS − 1`. */
export const OVERFLOW = LEVELS * SLOTS
/** Slot lists: every level slot plus the overflow list. */
export const LISTS = OVERFLOW + 1
/** 32-bit words per level bitmap. */
const WORDS = SLOTS >> 5

/** Index of the lowest set bit of a non-zero 32-bit word. */
export function lowestBit(word: number): number {
  return 31 - Math.clz32(word & -word)
}

/** Occupancy bitmaps: which slots of which levels hold at least one timer. */
export class Occupancy {
  // Bit `slot & 31` of word `WORDS × level + (slot >> 5)` is set iff that slot is non-empty.
  readonly #words = new Int32Array(LEVELS * WORDS)
  /** Bit `level` is set iff the level has a non-empty slot. */
  levels = 0

  /** Marks slot `slot` of `level` non-empty. */
  set(level: number, slot: number): void {
    const w = level * WORDS + (slot >> 5)
    this.#words[w] = (this.#words[w] as number) | (1 << (slot & 31))
    this.levels |= 1 << level
  }

  /** Marks slot `slot` of `level` empty. */
  clear(level: number, slot: number): void {
    const words = this.#words
    const w = level * WORDS + (slot >> 5)
    const word = (words[w] as number) & ~(1 << (slot & 31))
    words[w] = word
    if (word === 0 && this.first(level, 0) < 0) this.levels &= ~(1 << level)
  }

  /** The first non-empty slot of `level` at or after `from`, or -1. */
  first(level: number, from: number): number {
    const words = this.#words
    const base = level * WORDS
    let w = from >> 5
    let word = (words[base + w] as number) & (-1 << (from & 31))
    for (;;) {
      if (word !== 0) return (w << 5) + lowestBit(word)
      if (++w === WORDS) return -1
      word = words[base + w] as number
    }
  }

  /** Marks everything empty. */
  reset(): void {
    this.#words.fill(0)
    this.levels = 0
  }
}
