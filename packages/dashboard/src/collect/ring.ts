/**
 * A bounded ring of the last `capacity` items, oldest first: the charts' history, the breakers'
 * changes, the stream's resume buffer.
 *
 * @module
 */

/** The last `capacity` items pushed, oldest first. */
export class Ring<T> {
  readonly #items: (T | undefined)[]
  #next = 0
  #size = 0

  /** @param capacity - how many items it keeps (≥ 1) */
  constructor(readonly capacity: number) {
    this.#items = new Array<T | undefined>(capacity)
  }

  /** How many items it holds. */
  get size(): number {
    return this.#size
  }

  /** Adds `item`, forgetting the oldest when full. */
  push(item: T): void {
    this.#items[this.#next] = item
    this.#next = (this.#next + 1) % this.capacity
    if (this.#size < this.capacity) this.#size++
  }

  /** The items after the last one that `isOld` says is old (a time-ordered ring: a scan from the newest). */
  after(isOld: (item: T) => boolean): T[] {
    const out: T[] = []
    for (let i = 1; i <= this.#size; i++) {
      const item = this.#items[(this.#next - i + this.capacity) % this.capacity] as T
      if (isOld(item)) break
      out.push(item)
    }
    return out.reverse()
  }

  /** The items, oldest first. */
  toArray(): T[] {
    const out: T[] = []
    const start = (this.#next - this.#size + this.capacity) % this.capacity
    for (let i = 0; i < this.#size; i++) out.push(this.#items[(start + i) % this.capacity] as T)
    return out
  }
}
