/**
 * Options of `stop()`.
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'

/**
 * Options of `Loop.stop`.
 *
 * @group Shutdown
 */
export interface StopOptions {
  /**
   * `true`: run every queued message first. `false`: cancel what is queued (outcome `cancelled`),
   * abort running handlers' `signal`, and wait only for them to settle.
   * @defaultValue true
   */
  readonly drain?: boolean
  /**
   * Drain by priority for at most this long (ms); then abort what still runs (its `ctx.signal`, its late
   * effects fenced) and resolve with a snapshot of every unfinished message. With a deadline (or a
   * `signal`), delayed messages not yet due stay cancellable until the stop ends, then go to the
   * snapshot instead of being cancelled.
   * @defaultValue Infinity (no deadline)
   */
  readonly deadlineMs?: number
  /** Cuts the drain short when aborted, as the deadline does (e.g. a second SIGTERM). */
  readonly signal?: AbortSignalLike
}
