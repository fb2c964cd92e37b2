/**
 * The shutdown snapshot: what `stop()` hands back and `restore()` takes — plain, versioned,
 * JSON-safe data.
 *
 * @module
 */
import type { AttemptRecord } from './failures.js'
import type { JobState } from './jobs.js'
import type { MessageHeaders, MessageKey } from './message.js'
import type { PriorityLevel } from './priority.js'
import type { RetryOptions } from './retry.js'
import type { ScheduleState } from './schedules.js'

/**
 * The format name every snapshot carries.
 *
 * @group Shutdown
 */
export const SNAPSHOT_FORMAT = 'flowing.snapshot'

/**
 * The snapshot version this release writes and reads.
 *
 * @group Shutdown
 */
export const SNAPSHOT_VERSION = 1

/**
 * Where an unfinished message was when the loop stopped: `queued` (ready, or parked behind a busy key),
 * `held` (by an open circuit breaker), `running` (aborted at the deadline: it will run again), `delayed`
 * (not due yet), `retry-scheduled` (backing off after a failed attempt).
 *
 * @group Shutdown
 */
export type SnapshotState = 'queued' | 'held' | 'running' | 'delayed' | 'retry-scheduled'

/**
 * One unfinished message.
 *
 * @group Shutdown
 */
export interface SnapshotMessage {
  /** Its id in the loop that stopped (restored messages get new ids; `dedupe: 'id'` keys keep this one). */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its payload (must be JSON-serializable for the snapshot to be). */
  readonly payload: unknown
  /** Its key, if any. */
  readonly key?: MessageKey
  /** Its priority. */
  readonly priority: PriorityLevel
  /** The trace id it shares with its follow-ups. */
  readonly traceId: string
  /** Follow-up depth. */
  readonly hops: number
  /** Where it was. */
  readonly state: SnapshotState
  /** For `delayed` and `retry-scheduled`: ms it still had to wait. */
  readonly dueInMs?: number
  /** Attempts it made (restored, it continues with the next attempt number). */
  readonly attempts: readonly AttemptRecord[]
  /** Its idempotency key, if any (kept, so nothing already done runs again). */
  readonly idempotencyKey?: string
  /** What its handler passed to `ctx.commit()`, if it committed (a retry resumes after it). */
  readonly checkpoint?: unknown
  /** Its per-post retry policy, if it had one. */
  readonly retry?: RetryOptions
  /** Its per-post handler deadline, if it had one. */
  readonly handlerTimeoutMs?: number
  /** Its key group, if it was posted with one. */
  readonly group?: string
  /** Its headers, if it has any. */
  readonly headers?: MessageHeaders
  /** Its job key, if it was posted with one (a restore binds the key to it again). */
  readonly job?: JobState
  /** The schedule it holds, when it is a schedule's next fire. */
  readonly schedule?: ScheduleState
  /**
   * Attempts of it that a crash interrupted (a journal's recovery counts them; absent: none): kept, so
   * `maxCrashes` still ends a crash loop after a stop and a restore.
   */
  readonly crashes?: number
}

/**
 * What `stop({ deadlineMs })` resolves with and `restore()` takes.
 *
 * @group Shutdown
 */
export interface LoopSnapshot {
  /** Always `flowing.snapshot`. */
  readonly format: typeof SNAPSHOT_FORMAT
  /** The version ({@link SNAPSHOT_VERSION}). */
  readonly version: typeof SNAPSHOT_VERSION
  /**
   * Wall-clock time it was taken (ms since the epoch, the loop clock's `wallNow()`): a restore subtracts the
   * time since — on the restoring loop's clock — from delays.
   */
  readonly takenAt: number
  /** Whether everything finished before the deadline (then only `delayed` messages can be left). */
  readonly drained: boolean
  /** The unfinished messages, in post order. */
  readonly messages: readonly SnapshotMessage[]
}
