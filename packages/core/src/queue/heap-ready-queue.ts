import { Heap } from 'heap-js'
import type { Envelope } from '../internal/envelope.js'
import type { ReadyQueue } from './ready-queue.js'
import type { Urgency } from './urgency.js'

/**
 * The ready queue as one binary heap (heap-js) ordered by (rank, seq): O(log n) push and shift. Kept
 * as the reference structure and as the benchmark's point of comparison for `LevelQueue`.
 */
export class HeapReadyQueue implements ReadyQueue {
  readonly #heap: Heap<Envelope>

  /** @param urgency - the rank order (aging) */
  constructor(urgency: Urgency) {
    this.#heap = new Heap<Envelope>(urgency.compare)
  }

  get length(): number {
    return this.#heap.length
  }

  push(m: Envelope): void {
    this.#heap.add(m)
  }

  peek(): Envelope | undefined {
    return this.#heap.peek()
  }

  shift(): Envelope | undefined {
    return this.#heap.pop()
  }

  evictLowest(minPriority: number): Envelope | undefined {
    // Least urgent level, oldest first: O(n), acceptable for a policy that only runs when full.
    let victim: Envelope | undefined
    for (const m of this.#heap.heapArray) {
      if (!victim || m.priority > victim.priority || (m.priority === victim.priority && m.order < victim.order))
        victim = m
    }
    if (victim === undefined || victim.priority < minPriority) return undefined
    this.#heap.remove(victim)
    return victim
  }

  values(): Iterable<Envelope> {
    return this.#heap.heapArray
  }
}
