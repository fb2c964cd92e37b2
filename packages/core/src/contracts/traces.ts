/**
 * Trace contracts: the states of a message and the plain trace `loop.trace(id)` and `loop.inspect()`
 * return.
 *
 * @module
 */

import type { AttemptRecord } from './failures.js'
import type { MessageKey } from './message.js'

/**
 * The states of a message (docs/design/message-lifecycle.md has the diagram):
 * `delayed` → `queued` → `running` → `succeeded` | `failed` | `timed-out`;
 * a failed or timed-out attempt → `retry-scheduled` → `queued` … or → `dead-lettered` (→
 * `request-failed` instead when a `loop.request()` caller takes the error);
 * `queued` → `held` (its route's breaker is open, or its type is paused: detail `paused`) → `queued`;
 * `queued` or `running` → `rate-limited` (a budget is full, or the handler threw `RateLimitError`) → `queued`; `running` → `committed` (its side effect is
 * done, `ctx.commit()`) → …; `dropped` and `cancelled` end it early; `snapshotted`: handed back by a stop.
 *
 * @group Failure handling
 * @category Traces
 */
export type MessageState =
  | 'delayed'
  | 'queued'
  | 'held'
  | 'rate-limited'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed-out'
  | 'retry-scheduled'
  | 'dead-lettered'
  | 'request-failed'
  | 'dropped'
  | 'cancelled'
  | 'committed'
  | 'snapshotted'

/**
 * One step of a trace.
 *
 * @group Failure handling
 * @category Traces
 */
export interface Transition {
  /** The state entered. */
  readonly state: MessageState
  /** Clock time (ms). */
  readonly at: number
  /** The attempt it belongs to (running, failed, timed-out, retry-scheduled, succeeded). */
  readonly attempt?: number
  /** Extra context: the back-off, the breaker's route, the drop reason. */
  readonly detail?: string
}

/**
 * A message's trace: plain, JSON-serializable data.
 *
 * @group Failure handling
 * @category Traces
 */
export interface MessageTrace {
  /** The message id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its key, if any. */
  readonly key: MessageKey | undefined
  /** Its route key, if its type has a router. */
  readonly routeKey: string | undefined
  /** The trace id it shares with its follow-ups. */
  readonly traceId: string
  /** The current (or final) state. */
  readonly state: MessageState
  /** Finished attempts, oldest first. */
  readonly attempts: readonly AttemptRecord[]
  /** Every state change, oldest first (at most {@link MAX_TRANSITIONS}; `truncated` counts the rest). */
  readonly transitions: readonly Transition[]
  /** Transitions left out past the bound (a message held and released many times). */
  readonly truncated: number
}

/**
 * Transitions kept per message.
 *
 * @group Failure handling
 * @category Traces
 */
export const MAX_TRANSITIONS = 64
