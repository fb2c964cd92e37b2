/**
 * The mechanism of the hierarchical wheel, without argument checks (the public `TimingWheel` does
 * those). Read `docs/design/timing-wheel.md` first: this file implements its invariants.
 *
 * Levels are aligned to absolute ticks (as in the Linux 2016 rework and tokio), not to the time of
 * insertion: a timer due at tick `k` lives at the lowest level `i` whose parent block
 * `⌊k / S^(i+1)⌋` (S = slots per level) equals that of the current tick `e`, in slot
 * `⌊k / S^i⌋ mod S`. So every timer at level `i` is due later than every timer below it, and the
 * slots after the current one are in time order.
 *
 * @internal
 * @module
 */
import { NodePool } from './node-pool.js'
import { LEVELS, LISTS, lowestBit, Occupancy, OVERFLOW, SLOT_BITS, SLOTS } from './occupancy.js'
import { SlotVectors, TOMBSTONE } from './slot-vectors.js'

const INV_SLOTS = 1 / SLOTS
/** 1 / S^LEVELS: tick → index of the top level's block (the unit of overflow re-placement). */
const INV_TOP = INV_SLOTS ** LEVELS
/** POW[i] = S^i: the width in ticks of a slot of level i. */
const POW = Array.from({ length: LEVELS + 1 }, (_, i) => SLOTS ** i)
/**
 * Ticks are clamped here (2^1000: exact, and slot arithmetic stays far below 2^1024), so absurd
 * times (≥ 10^290 ms) cannot turn block arithmetic into Infinity − Infinity. Firing still compares the
 * exact deadline, so a clamped timer is never early; it merely waits in the last slot.
 */
const MAX_TICK = 2 ** 1000

/** Running totals, exposed through `TimingWheel.stats()`. */
export interface WheelCounters {
  scheduled: number
  fired: number
  cancelled: number
  cleared: number
  cascaded: number
  slotsVisited: number
}

/** Nodes, slots and the current tick; `TimingWheel` validates and delegates here. */
export class WheelCore<T> {
  readonly pool: NodePool<T>
  readonly counters: WheelCounters = { scheduled: 0, fired: 0, cancelled: 0, cleared: 0, cascaded: 0, slotsVisited: 0 }
  /** Pending timers (wheel and overflow). */
  size = 0
  readonly #slots = new SlotVectors(LISTS)
  readonly #occupied = new Occupancy()
  // Ticks per ms: deadline → tick is one multiplication; only its monotonicity matters, since firing
  // compares the exact deadline with `now`.
  readonly #perTick: number
  // The current tick `e`: every tick before it has been processed. Moves forward only, in advance().
  #tick = 0
  // block[i] = ⌊e / S^i⌋ for i = 0 … LEVELS, kept in step with `e` so placing a timer divides nothing.
  readonly #block = new Float64Array(LEVELS + 1)
  // Cache of nextDeadline() and the slot it is in; NaN = unknown. Lowered by insert, invalidated by
  // advance and by a cancel in that slot (a cancel elsewhere cannot change the minimum).
  #next = Number.NaN
  #nextSlot = -1
  // Start tick of the slot #firstSlot() last found.
  #foundStart = 0

  /**
   * @param tickMs - slot width of level 0, in ms
   * @param maxPending - bound on pending timers
   * @param start - the clock's time at creation, in ms
   */
  constructor(tickMs: number, maxPending: number, start: number) {
    this.#perTick = 1 / tickMs
    this.pool = new NodePool<T>(maxPending)
    this.#setTick(Math.min(Math.floor(start * this.#perTick), MAX_TICK))
  }

  /** Adds a timer; the caller checked the deadline and the bound. Returns its id. */
  insert(deadline: number, item: T): number {
    const x = this.pool.alloc(item)
    const s = this.#place(x, deadline)
    this.counters.scheduled++
    if (++this.size === 1 || deadline < this.#next) {
      this.#next = deadline
      this.#nextSlot = s
    }
    return this.pool.idOf(x)
  }

  /** Cancels timer `id`; false for a stale or unknown id. */
  remove(id: number): boolean {
    const pool = this.pool
    const x = pool.indexOf(id)
    if (x < 0) return false
    const s = pool.slot(x)
    if (this.#slots.remove(s, pool.position(x)) && s < OVERFLOW) this.#occupied.clear(s >> SLOT_BITS, s & (SLOTS - 1))
    pool.release(x)
    this.size--
    this.counters.cancelled++
    if (s === this.#nextSlot) this.#next = Number.NaN
    return true
  }

  /** True while timer `id` is pending. */
  has(id: number): boolean {
    return this.pool.indexOf(id) >= 0
  }

  /** Removes and returns, in deadline order, up to `limit` items due at `now` (deadline ≤ now). */
  advance(now: number, limit: number): T[] {
    const out: T[] = []
    this.#next = Number.NaN
    const target = Math.max(Math.min(Math.floor(now * this.#perTick), MAX_TICK), this.#tick)
    for (;;) {
      if (this.size > 0) this.#drain(target, now, limit, out)
      // Stopped by the budget: the tick stays at the unfinished slot so the next call resumes there.
      if (out.length >= limit) return out
      const crossing = Math.floor(target * INV_TOP) !== this.#block[LEVELS]
      if (target > this.#tick) this.#setTick(target)
      if (!crossing || this.#slots.live(OVERFLOW) === 0) return out
      // The top level's block changed: overflow timers may fit now (or even be due): place them anew.
      this.#cascade(OVERFLOW)
    }
  }

  /** The earliest pending deadline, exactly; undefined when nothing is pending. */
  nextDeadline(): number | undefined {
    if (this.size === 0) return undefined
    if (!Number.isNaN(this.#next)) return this.#next
    // The earliest timer is in the first non-empty slot (or in the overflow list if the wheel is empty).
    let s = this.#firstSlot()
    if (s < 0) s = OVERFLOW
    const indices = this.#slots.indices(s)
    const deadlines = this.#slots.deadlines(s)
    let min = Number.POSITIVE_INFINITY
    for (let j = this.#slots.length(s) - 1; j >= 0; j--) {
      if ((indices[j] as number) >= 0) min = Math.min(min, deadlines[j] as number)
    }
    this.#next = min
    this.#nextSlot = s
    return min
  }

  /** Removes every pending timer; returns their items in deadline order (ties in schedule order). */
  clear(): T[] {
    const pool = this.pool
    const slots = this.#slots
    const nodes: number[] = []
    const deadlines: number[] = []
    // Level by level, slot by slot, then overflow: already tick order, so the stable sort below only
    // orders deadlines within a tick and keeps ties in vector (= schedule) order.
    for (let s = 0; s <= OVERFLOW; s++) {
      const indices = slots.indices(s)
      const due = slots.deadlines(s)
      for (let j = 0, n = slots.length(s); j < n; j++) {
        if ((indices[j] as number) < 0) continue
        nodes.push(indices[j] as number)
        deadlines.push(due[j] as number)
      }
    }
    const order = byDeadline(deadlines)
    const items = order.map((j) => pool.items[nodes[j] as number] as T)
    for (const x of nodes) pool.release(x)
    slots.reset()
    this.#occupied.reset()
    this.size = 0
    this.#next = Number.NaN
    this.counters.cleared += nodes.length
    return items
  }

  /** Processes, in time order, every non-empty slot that starts at or before tick `target`. */
  #drain(target: number, now: number, limit: number, out: T[]): void {
    while (out.length < limit) {
      const s = this.#firstSlot()
      if (s < 0) return
      const start = this.#foundStart
      if (start > target) return
      this.counters.slotsVisited++
      // Jumping straight to the slot is what skips empty time: lower levels are empty here.
      if (start > this.#tick) this.#setTick(start)
      if (s >= SLOTS) this.#cascade(s)
      else {
        this.#fire(s, now, limit, out)
        // The slot of the current, partly elapsed tick keeps its not-yet-due timers: stop here.
        if (start === target) return
      }
    }
  }

  /** The first non-empty slot, setting #foundStart; -1 when the levels are empty. */
  #firstSlot(): number {
    const occupied = this.#occupied
    const block = this.#block
    for (let levels = occupied.levels; levels !== 0; levels &= levels - 1) {
      const level = lowestBit(levels)
      const parent = block[level + 1] as number
      // Slots before the current position are empty by the invariant; the search starts at it.
      const slot = occupied.first(level, (block[level] as number) - parent * SLOTS)
      if (slot >= 0) {
        this.#foundStart = (parent * SLOTS + slot) * (POW[level] as number)
        return level * SLOTS + slot
      }
    }
    return -1
  }

  /** The slot (list index) a timer due at `deadline` belongs to, given the current tick. */
  #slotOf(deadline: number): number {
    const block = this.#block
    let index = Math.floor(deadline * this.#perTick)
    // A deadline already past waits in the current slot: it is due at the next advance.
    if (!(index > this.#tick)) index = this.#tick
    else if (index > MAX_TICK) index = MAX_TICK
    let level = 0
    let parent = Math.floor(index * INV_SLOTS)
    while (parent !== block[level + 1]) {
      if (++level === LEVELS) return OVERFLOW
      index = parent
      parent = Math.floor(index * INV_SLOTS)
    }
    return level * SLOTS + (index - parent * SLOTS)
  }

  /** Appends node `x`, due at `deadline`, to the slot the deadline belongs to; returns the slot. */
  #place(x: number, deadline: number): number {
    const s = this.#slotOf(deadline)
    if (this.#slots.push(s, x, deadline, this.pool) && s < OVERFLOW) this.#occupied.set(s >> SLOT_BITS, s & (SLOTS - 1))
    return s
  }

  /** Empties slot (or overflow list) `s` and places each of its timers anew: they move down. */
  #cascade(s: number): void {
    const slots = this.#slots
    if (s < OVERFLOW) this.#occupied.clear(s >> SLOT_BITS, s & (SLOTS - 1))
    slots.take(s)
    const { takenIndices: indices, takenDeadlines: deadlines, taken: n } = slots
    let moved = 0
    for (let j = 0; j < n; j++) {
      const x = indices[j] as number
      if (x < 0) continue
      this.#place(x, deadlines[j] as number)
      moved++
    }
    slots.recycle(indices, deadlines)
    this.counters.cascaded += moved
  }

  /**
   * Fires the due timers of level-0 slot `s` in deadline order, within the budget. The slot is
   * sorted at most once (push keeps track of whether it is); then each call pops its due prefix, so
   * advancing many times within one partly elapsed tick costs only what fires.
   */
  #fire(s: number, now: number, limit: number, out: T[]): void {
    const pool = this.pool
    const slots = this.#slots
    if (!slots.isSorted(s)) slots.sort(s, pool)
    const indices = slots.indices(s)
    const deadlines = slots.deadlines(s)
    const n = slots.length(s)
    let fired = 0
    let j = slots.head(s)
    for (; j < n && out.length < limit; j++) {
      const x = indices[j] as number
      if (x === TOMBSTONE) continue
      if ((deadlines[j] as number) > now) break
      out.push(pool.items[x] as T)
      pool.release(x)
      indices[j] = TOMBSTONE
      fired++
    }
    this.size -= fired
    this.counters.fired += fired
    if (slots.consume(s, j, fired)) this.#occupied.clear(0, s)
  }

  /** Moves the current tick to `tick` (≥ the current one) and recomputes the block indices. */
  #setTick(tick: number): void {
    const block = this.#block
    this.#tick = tick
    block[0] = tick
    for (let i = 1; i <= LEVELS; i++) block[i] = Math.floor((block[i - 1] as number) * INV_SLOTS)
  }
}

/** Positions `0 … n − 1` sorted by `deadlines`, ties in position order. */
function byDeadline(deadlines: readonly number[]): number[] {
  const order = Array.from(deadlines, (_, j) => j)
  return order.sort((a, b) => (deadlines[a] as number) - (deadlines[b] as number) || a - b)
}
