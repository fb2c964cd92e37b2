/**
 * What failure handling is handed: its policy, where a failed message waits, where it ends.
 *
 * @module
 */
import type { DeadlineScheduler } from '@flowing/watchdog'
import type { Clock } from '../contracts/clock.js'
import type { FailureExitReport } from '../contracts/failures.js'
import type { MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { Registry } from '../dispatcher/registry.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { RecordParts } from '../journal/records.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { RateLimits } from '../limits/rate-limits.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { Outcomes } from '../outcomes/outcomes.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { StartFilters } from '../queue/start-filters.js'
import type { DeadLetterStore } from './dead-letters.js'

/** Where a failure's policy is read: the loop's options, then the type's registration. */
export interface FailurePolicyPorts<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly registry: Pick<Registry<M>, 'retryFor' | 'breakerFor'>
}

/** Where a failed message waits: the wheel (a retry's back-off), the queue (a breaker's hold), the rate limits. */
export interface FailureHoldPorts {
  /** The loop's shared timing wheel (retries back off on it). */
  readonly wheel: DeadlineScheduler<Envelope>
  readonly queue: RunQueue
  /** The queue's start filters (the breakers' hold sets its own). */
  readonly starts: StartFilters
  /** Messages that kept their places re-entered the queue (a due retry, a breaker's release): pump. */
  pump(): void
  /** The rate limits (a `RateLimitError` pauses its scope there). */
  readonly limits: Pick<RateLimits, 'backOff'>
}

/** Where a failure ends when it is not retried, and what may end the loop. */
export interface FailureExitPorts<M extends MessageMap> {
  readonly outcomes: Pick<
    Outcomes<M>,
    'deadLettered' | 'deadLetterAnnounced' | 'requestTakes' | 'requestFailed' | 'failureAnnounced' | 'snapshotted'
  >
  readonly deadLetters: DeadLetterStore
  /** Whether a stop cut the loop off, and whether retries may still be scheduled. */
  readonly lifecycle: Pick<Lifecycle, 'cut' | 'mayRetry'>
  /** The failure rate passed the `failureExit` threshold. */
  failureExit(report: FailureExitReport): void
}

/** The stages failure handling touches. */
export interface FailureParts<M extends MessageMap> {
  readonly policy: FailurePolicyPorts<M>
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly metrics: LoopMetrics
  /** The per-post side tables: a post's retry policy, the traces. */
  readonly records: RecordParts
  readonly holds: FailureHoldPorts
  readonly exits: FailureExitPorts<M>
}
