/**
 * **@flowing/watchdog** — handler deadlines that really stop work: O(1) guards on a timing wheel, an
 * `AbortSignal` created only when read, heartbeats that extend a soft deadline while the hard one
 * never moves, exactly one outcome per attempt, epoch fencing of late effects, zombie
 * accounting, and a stall detector for a loop that is alive but does not move.
 *
 * @example
 * ```ts
 * import { Watchdog } from '@flowing/watchdog'
 *
 * const watchdog = new Watchdog({ onTimeout: (attempt, error) => console.log(error.message) })
 * const attempt = watchdog.guard({ timeoutMs: 5, label: { type: 'order.paid', key: 'o-1' } })
 * await new Promise((resolve) => attempt.signal.addEventListener('abort', resolve))
 * console.log(attempt.state, attempt.done()) // 'timed-out' false — the late completion is counted
 * console.log(watchdog.lateCompletions) // 1
 * ```
 *
 * @packageDocumentation
 * @module @flowing/watchdog
 */
export type { AbortSignalLike, MinimalAbortSignal } from './abort-signal.js'
export { Attempt, type TimeoutHandler, type ZombieHandler, type ZombieInfo } from './attempt.js'
export type { AttemptLabel, AttemptSnapshot, AttemptState } from './contracts.js'
export type { DeadlineScheduler } from './deadline-scheduler.js'
export {
  AttemptCancelledError,
  describeValue,
  FencedError,
  HandlerTimeoutError,
  type TimeoutKind,
  WatchdogArgumentError,
  WatchdogError,
  type WatchdogErrorCode,
} from './errors.js'
export {
  StallDetector,
  type StallDetectorOptions,
  type StallDetectorStats,
  type StallKind,
  type StallReport,
} from './stall-detector.js'
export { type GuardOptions, Watchdog, type WatchdogOptions, type WatchdogStats } from './watchdog.js'
