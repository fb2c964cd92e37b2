/**
 * The data contracts of an attempt — its state, the label it is guarded under, its snapshot — in a
 * leaf module: the attempt, the watchdog, the label renderer and the stall detector all use them, and
 * none of them has to import another for it (the attempt ↔ core ↔ label import cycle is gone).
 *
 * @module
 */

/**
 * Where an attempt stands. `running` until exactly one of the four outcomes wins.
 *
 * @group Attempts
 */
export type AttemptState = 'running' | 'completed' | 'failed' | 'timed-out' | 'cancelled'

/**
 * What is guarded, for messages and reports. A message object with `type`, `key` and `id` fields
 * fits as it is (no allocation); rendered only when an error or report needs it.
 *
 * @group Attempts
 */
export interface AttemptLabel {
  /** The message type, e.g. `order.paid`. */
  readonly type?: string
  /** The route key. */
  readonly key?: unknown
  /** The message id. */
  readonly id?: unknown
}

/**
 * A snapshot of one attempt for stall reports and dashboards.
 *
 * @group Attempts
 */
export interface AttemptSnapshot {
  /** The attempt's epoch. */
  readonly epoch: number
  /** The rendered label. */
  readonly label: string
  /** The state at the time of the snapshot. */
  readonly state: AttemptState
  /** Time since the attempt was guarded, in ms. */
  readonly ageMs: number
}
