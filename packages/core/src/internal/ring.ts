/**
 * A growable ring-buffer FIFO. Arrays with `shift()` are O(n) per dequeue once V8 leaves fast mode;
 * a power-of-two ring keeps push/shift O(1) and allocation-free in steady state.
 */
export class Ring<T> {
  // Slots; length is always a power of two so `& mask` replaces `%`.
  #items: (T | undefined)[]
  #mask: number
  // Index of the head element.
  #head = 0
  #length = 0

  constructor(initialCapacity = 16) {
    let cap = 16
    while (cap < initialCapacity) cap *= 2
    this.#items = new Array<T | undefined>(cap)
    this.#mask = cap - 1
  }

  get length(): number {
    return this.#length
  }

  push(item: T): void {
    if (this.#length === this.#items.length) this.#grow()
    this.#items[(this.#head + this.#length) & this.#mask] = item
    this.#length++
  }

  peek(): T | undefined {
    return this.#length === 0 ? undefined : this.#items[this.#head]
  }

  shift(): T | undefined {
    if (this.#length === 0) return undefined
    const item = this.#items[this.#head]
    this.#items[this.#head] = undefined // let the GC have it
    this.#head = (this.#head + 1) & this.#mask
    this.#length--
    return item
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.#length; i++) yield this.#items[(this.#head + i) & this.#mask] as T
  }

  #grow(): void {
    const old = this.#items
    const next = new Array<T | undefined>(old.length * 2)
    for (let i = 0; i < this.#length; i++) next[i] = old[(this.#head + i) & this.#mask]
    this.#items = next
    this.#head = 0
    this.#mask = next.length - 1
  }
}
