/**
 * What the engine hands the attempts: leaves, what a start reads, where an attempt ends.
 *
 * @module
 */
import type { StallDetector, Watchdog } from '@flowing/watchdog'
import type { Entries } from '../admission/entries.js'
import type { Pacing } from '../admission/pacing.js'
import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { Registry } from '../dispatcher/registry.js'
import type { Failures } from '../failure/failures.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { Journal } from '../journal/journal.js'
import type { RecordParts } from '../journal/records.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { DispatchGate } from '../limits/dispatch-gate.js'
import type { Bookings } from '../limits/rate-limit-hold.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { Outcomes } from '../outcomes/outcomes.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { TimeoutBreakers } from './timeout-breakers.js'

/** What a start reads: may it start, what holds it back, where it comes from. */
export interface AttemptStartPorts {
  readonly lifecycle: Pick<Lifecycle, 'dispatches'>
  /** What may hold every start back: the resource gate, the loop-wide rate limits. */
  readonly gate: Pick<DispatchGate, 'allows'> | undefined
  readonly queue: RunQueue
  /** A slot in the queue freed: producers and overdue messages waiting for room. */
  readonly pacing: Pick<Pacing<MessageMap>, 'roomFreed'>
  /** The rate-limit budgets a start booked: counted from its handler's entry. */
  readonly limits: Bookings
  /** The loop's handler deadline (`timeoutMs`). */
  readonly timeoutMs: number
}

/** Where an attempt goes: its deadline, its end, its effects. */
export interface AttemptEndPorts<M extends MessageMap> {
  readonly watchdog: Pick<Watchdog, 'guard'>
  readonly outcomes: Pick<Outcomes<M>, 'succeeded' | 'snapshotted' | 'dropped' | 'idleCheck' | 'inTransit' | 'landed'>
  readonly failures: Pick<Failures<M>, 'attemptOf' | 'started' | 'failed' | 'probeTimeout' | 'circuits'>
  readonly breakers: Pick<TimeoutBreakers, 'record'> | undefined
  readonly stall: Pick<StallDetector, 'progress'> | undefined
  /** `ctx.commit()` checkpoints, journaled; the crash-loop guard, told of each attempt's start and end. */
  readonly journal: Pick<Journal<M>, 'committed' | 'guard'> | undefined
  /** The ways in: a handler's follow-ups enter there. */
  readonly entries: Pick<Entries<M>, 'postFollowUp'>
}

/** The stages an attempt touches. */
export interface AttemptParts<M extends MessageMap> {
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly registry: Registry<M>
  readonly metrics: LoopMetrics
  /** The per-post side tables: extras, traces, the idempotency ledger. */
  readonly records: RecordParts
  readonly starts: AttemptStartPorts
  readonly ends: AttemptEndPorts<M>
}
