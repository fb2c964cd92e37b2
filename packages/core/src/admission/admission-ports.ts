/**
 * What the engine hands admission: its policy, what may refuse a post, where an admitted post goes.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { Registry } from '../dispatcher/registry.js'
import type { QueueLoad } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { Journal } from '../journal/journal.js'
import type { RecordParts } from '../journal/records.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { Outcomes } from '../outcomes/outcomes.js'
import type { TimeoutBreakers } from '../pool/timeout-breakers.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { Requests } from '../requests/requests.js'
import type { DelayedPosts } from '../timers/delayed-posts.js'
import type { LoopPressure } from './pressure.js'

/** Where a post's policy is read: the loop's options, then its type's registration. */
export interface AdmissionPolicyPorts<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly registry: Pick<Registry<M>, 'resolve' | 'retryFor' | 'payloadCheckFor'>
}

/** What may refuse a post: the run state, an open timeout breaker, pressure, a failing journal. */
export interface AdmissionGatePorts<M extends MessageMap> {
  readonly lifecycle: Pick<Lifecycle, 'state' | 'admitsRoots' | 'admitsFollowUps'>
  readonly breakers: Pick<TimeoutBreakers, 'refuses'> | undefined
  readonly pressure: LoopPressure | undefined
  /** The journal refuses posts while it cannot commit; an admitted post is journaled. */
  readonly journal: Pick<Journal<M>, 'refusal' | 'admitted' | 'touch'> | undefined
  /** The queue's load, as overload errors report it. */
  load(): QueueLoad
}

/** Where an admitted post goes, and who waits for it. */
export interface AdmissionPlacePorts {
  readonly queue: RunQueue
  readonly delayed: Pick<DelayedPosts, 'length' | 'schedule'>
  /** A post dropped by the overflow policy (or the victim it evicted) ends there. */
  readonly outcomes: Pick<Outcomes<MessageMap>, 'dropped'>
  /** The `request()` being posted, bound to its message. */
  readonly requests: Pick<Requests, 'take' | 'bind' | 'cancelling'>
  /** Per-message cancel (a post's aborted `signal`). */
  cancel(m: Envelope, why: string, reason?: unknown): unknown
  /** Schedules the pool's pump (one per synchronous burst). */
  schedulePump(): void
}

/** The stages admission touches. */
export interface AdmissionParts<M extends MessageMap> {
  readonly policy: AdmissionPolicyPorts<M>
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly metrics: LoopMetrics
  /** The per-post side tables: extras, traces, the idempotency ledger. */
  readonly records: RecordParts
  readonly gates: AdmissionGatePorts<M>
  readonly places: AdmissionPlacePorts
}
