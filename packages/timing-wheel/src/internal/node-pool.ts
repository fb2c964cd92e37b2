/**
 * Timer nodes as 12-byte records in one `Int32Array` — generation, slot, position in the slot —
 * with a free list, instead of a ~100-byte object per timer; plus one slot of a plain array for the
 * item. The deadline lives next to the node's index in its slot's vectors (see `slot-vectors.ts`),
 * so walking a slot reads memory sequentially and only *writes* node records: writes do not stall
 * the CPU the way a chain of cache-missing reads does.
 *
 * @internal
 * @module
 */

/** Timer ids are `generation × INDEX_SPAN + index`: 24 index bits, 29 generation bits, < 2^53. */
export const INDEX_SPAN = 2 ** 24
const INDEX_MASK = INDEX_SPAN - 1
const GENERATION_MASK = 2 ** 29 - 1
/** Record size in int32 words (12 B) and the field offsets. */
const STRIDE = 3
const GENERATION = 0
const SLOT = 1
const POSITION = 2
/** The slot field of a free node. */
const FREE = -1
/** Growth step: ×1.5 keeps the unused tail of the buffer under a third of its size. */
const GROWTH = 1.5
const MIN_CAPACITY = 1024

/** The node records, the items, and the free list. */
export class NodePool<T> {
  /** The item of each node; `undefined` once released, so the pool never retains user data. */
  readonly items: (T | undefined)[] = []
  // Records: generation at [3x], slot at [3x + 1] (FREE when free), position at [3x + 2].
  #records: Int32Array
  // Hard bound on the node count: the buffer never grows past it.
  readonly #limit: number
  // Head of the free list (linked through the position field), -1 when empty: LIFO keeps hot nodes
  // in cache.
  #free = -1

  /** @param maxNodes - the most nodes that will ever be live at once */
  constructor(maxNodes: number) {
    // Node 0 is never handed out, so no timer id is 0 (a falsy id would invite `if (id)` bugs).
    this.#limit = maxNodes + 1
    this.#records = new Int32Array(Math.min(this.#limit, MIN_CAPACITY) * STRIDE)
    this.#records[SLOT] = FREE
    this.items.push(undefined)
  }

  /** Timer nodes the buffer holds without growing. */
  get capacity(): number {
    return this.#records.length / STRIDE - 1
  }

  /** The slot (list) node `x` is in. */
  slot(x: number): number {
    return this.#records[x * STRIDE + SLOT] as number
  }

  /** Index of node `x` in its slot's vectors. */
  position(x: number): number {
    return this.#records[x * STRIDE + POSITION] as number
  }

  /** Records where node `x` now is: slot `s`, index `position` in its vectors. */
  setWhere(x: number, s: number, position: number): void {
    const at = x * STRIDE
    this.#records[at + SLOT] = s
    this.#records[at + POSITION] = position
  }

  /** Records a new position of node `x` within its slot (compaction). */
  setPosition(x: number, position: number): void {
    this.#records[x * STRIDE + POSITION] = position
  }

  /** Takes a free node for `item`. The caller guarantees fewer than `maxNodes` are live. */
  alloc(item: T): number {
    let x = this.#free
    if (x >= 0) {
      this.#free = this.position(x)
      this.items[x] = item
    } else {
      x = this.items.length
      if (x * STRIDE === this.#records.length) this.#grow()
      this.items.push(item)
    }
    return x
  }

  /** Returns node `x` (already out of its slot) to the free list; its ids go stale. */
  release(x: number): void {
    const records = this.#records
    const at = x * STRIDE
    this.items[x] = undefined
    records[at + GENERATION] = ((records[at + GENERATION] as number) + 1) & GENERATION_MASK
    records[at + SLOT] = FREE
    records[at + POSITION] = this.#free
    this.#free = x
  }

  /** The id of live node `x`. */
  idOf(x: number): number {
    return (this.#records[x * STRIDE + GENERATION] as number) * INDEX_SPAN + x
  }

  /** The node of a live timer id, or -1 for a stale, unknown or malformed id. */
  indexOf(id: number): number {
    const x = id & INDEX_MASK
    if (x === 0 || x >= this.items.length || this.idOf(x) !== id) return -1
    return this.slot(x) === FREE ? -1 : x
  }

  #grow(): void {
    const nodes = this.#records.length / STRIDE
    const capacity = Math.min(this.#limit, Math.max(nodes + MIN_CAPACITY, Math.ceil(nodes * GROWTH)))
    const records = new Int32Array(capacity * STRIDE)
    records.set(this.#records)
    this.#records = records
  }
}
