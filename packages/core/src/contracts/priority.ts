/**
 * Priorities: small integers, lower = more urgent, as in the seeds' heap. Ten levels (0–9) are enough
 * to express intent and let the queue keep one FIFO per level (see `queue/level-queue.ts`).
 *
 * @module
 */

/**
 * The most urgent priority accepted.
 *
 * @group Messages
 * @category Priority
 */
export const MIN_PRIORITY = 0

/**
 * The least urgent priority accepted.
 *
 * @group Messages
 * @category Priority
 */
export const MAX_PRIORITY = 9

/**
 * Named priority levels for readability; any integer from {@link MIN_PRIORITY} to {@link MAX_PRIORITY}
 * is valid.
 *
 * @example
 * ```ts
 * loop.post('order.paid', payload, { priority: Priority.high })
 * ```
 *
 * @group Messages
 * @category Priority
 */
export const Priority = {
  /** 0 — pages someone if late. */
  critical: 0,
  /** 2 — user-facing work. */
  high: 2,
  /** 5 — the default. */
  normal: 5,
  /** 7 — housekeeping. */
  low: 7,
  /** 9 — best effort, first to be evicted by `drop-oldest-lowest`. */
  background: 9,
} as const

/**
 * An integer priority from 0 (most urgent) to 9 (least).
 *
 * @group Messages
 * @category Priority
 */
export type PriorityLevel = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
