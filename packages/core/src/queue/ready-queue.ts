import type { Envelope } from '../internal/envelope.js'

/**
 * The pluggable priority structure behind the loop: messages not yet taken by a worker, ordered by
 * urgency (see `Urgency`). Implementations: `LevelQueue` (one FIFO per priority level, the default)
 * and `HeapReadyQueue` (heap-js), kept to measure one against the other.
 *
 * @remarks Pushes arrive in post order, so every level's ranks are non-decreasing — implementations may
 * rely on it.
 */
export interface ReadyQueue {
  /** Number of messages held. */
  readonly length: number
  /** Adds a newly posted message. */
  push(m: Envelope): void
  /** The most urgent message, without removing it. */
  peek(): Envelope | undefined
  /** Removes and returns the most urgent message. */
  shift(): Envelope | undefined
  /**
   * Removes and returns the oldest message of the least urgent priority level present, provided that
   * level is `minPriority` or less urgent; otherwise removes nothing.
   */
  evictLowest(minPriority: number): Envelope | undefined
  /** Every message held, in no particular order. */
  values(): Iterable<Envelope>
}
