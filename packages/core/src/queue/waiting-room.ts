import { Heap } from 'heap-js'

/** A producer blocked in `send()` until the queue has space. */
export interface Waiter {
  /** Serves more urgent producers first. */
  readonly priority: number
  /** Arrival order among equal priority. */
  readonly seq: number
  /** Set once the waiter was admitted, timed out or aborted; the heap skips it lazily. */
  settled: boolean
}

const byPriorityThenArrival = (a: Waiter, b: Waiter): number => a.priority - b.priority || a.seq - b.seq

/**
 * Producers waiting for space, served by priority then arrival (p-queue's `onSizeLessThan` wakes every
 * waiter and lets them race; here a freed slot admits exactly one waiter, synchronously, so the wake
 * count equals the slots freed and nobody can steal a slot in between).
 *
 * @remarks An aborted or timed-out waiter is only flagged (O(1)); the heap is compacted once dead
 * entries outnumber live ones, so memory stays proportional to live waiters.
 */
export class WaitingRoom<W extends Waiter> {
  #heap = new Heap<W>(byPriorityThenArrival)
  #live = 0

  /** Live (unsettled) waiters. */
  get length(): number {
    return this.#live
  }

  /** Adds a waiter. */
  add(waiter: W): void {
    this.#heap.add(waiter)
    this.#live++
  }

  /** The next live waiter, without removing it (settled entries on top are discarded). */
  peek(): W | undefined {
    for (let w = this.#heap.peek(); w !== undefined; w = this.#heap.peek()) {
      if (!w.settled) return w
      this.#heap.pop()
    }
    return undefined
  }

  /** Removes and returns the next live waiter, marking it settled. */
  next(): W | undefined {
    for (let w = this.#heap.pop(); w !== undefined; w = this.#heap.pop()) {
      if (!w.settled) {
        w.settled = true
        this.#live--
        return w
      }
    }
    return undefined
  }

  /** Marks a waiter settled (aborted, timed out); returns false if it already was. */
  withdraw(waiter: W): boolean {
    if (waiter.settled) return false
    waiter.settled = true
    this.#live--
    if (this.#heap.length > 32 && this.#heap.length > 2 * this.#live) this.#compact()
    return true
  }

  #compact(): void {
    const live = this.#heap.heapArray.filter((w) => !w.settled)
    this.#heap = new Heap<W>(byPriorityThenArrival)
    this.#heap.init(live)
  }
}
