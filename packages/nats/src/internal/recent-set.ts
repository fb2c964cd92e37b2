/**
 * A set that keeps only its latest `size` members: the oldest is forgotten as each new one arrives.
 *
 * @module
 */

/** The latest `size` numbers added, for membership tests. */
export class RecentSet {
  readonly #ring: number[] = []
  readonly #members = new Set<number>()
  #at = 0
  readonly #size: number

  /** @param size - how many members it keeps */
  constructor(size: number) {
    this.#size = size
  }

  /** Adds `n`, forgetting the oldest member when full. */
  add(n: number): void {
    if (this.#members.has(n)) return
    const oldest = this.#ring[this.#at]
    if (oldest !== undefined) this.#members.delete(oldest)
    this.#ring[this.#at] = n
    this.#members.add(n)
    this.#at = (this.#at + 1) % this.#size
  }

  /** Whether `n` is among the latest members. */
  has(n: number): boolean {
    return this.#members.has(n)
  }
}
