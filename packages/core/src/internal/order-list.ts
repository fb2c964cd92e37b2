/**
 * An intrusive doubly linked list in insertion (or recency) order: appending, removing any node,
 * moving one to the newest end and finding the oldest are O(1), and allocate nothing — the nodes
 * carry their own links. The dead-letter store keeps its letters in one (oldest first).
 *
 * Why not a `Map`'s own order: V8 leaves a deleted entry's slot in place until the table is rebuilt,
 * and `map.keys().next()` walks over every such slot at the front — evicting the oldest of 100,000
 * entries that way costs tens of microseconds.
 *
 * @module
 */

/** What a node of an {@link OrderList} carries: its neighbours (`null` at either end, or unlinked). */
export interface OrderLinks<N> {
  /** The neighbour toward the oldest end. */
  older: N | null
  /** The neighbour toward the newest end. */
  newer: N | null
}

/** The list; a node belongs to one list at a time, and the caller knows whether it is linked. */
export class OrderList<N extends OrderLinks<N>> {
  #oldest: N | null = null
  #newest: N | null = null
  #length = 0

  /** Nodes linked. */
  get length(): number {
    return this.#length
  }

  /** The oldest (least recently appended or touched) node, if any. */
  get oldest(): N | null {
    return this.#oldest
  }

  /** Links `n`, which is in no list, as the newest. */
  append(n: N): void {
    const newest = this.#newest
    n.older = newest
    n.newer = null
    if (newest === null) this.#oldest = n
    else newest.newer = n
    this.#newest = n
    this.#length++
  }

  /** Unlinks `n`, which is in this list. */
  remove(n: N): void {
    const { older, newer } = n
    if (older === null) this.#oldest = newer
    else older.newer = newer
    if (newer === null) this.#newest = older
    else newer.older = older
    n.older = null
    n.newer = null
    this.#length--
  }

  /** Makes `n`, which is in this list, the newest. */
  touch(n: N): void {
    if (n === this.#newest) return
    this.remove(n)
    this.append(n)
  }

  /** The nodes, oldest first (a node removed meanwhile ends the walk early: collect first to remove). */
  *[Symbol.iterator](): IterableIterator<N> {
    for (let n = this.#oldest; n !== null; n = n.newer) yield n
  }
}
