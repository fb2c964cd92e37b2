/**
 * What the engine hands the outcomes: leaves, where an outcome's news goes, and the two loop-backs.
 *
 * @module
 */
import type { MessageMap } from '../contracts/message.js'
import type { MessageLogger } from '../contracts/outcomes.js'
import type { DeadLetterStore } from '../failure/dead-letters.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { Journal } from '../journal/journal.js'
import type { RecordParts } from '../journal/records.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { Requests } from '../requests/requests.js'
import type { HandBack } from '../shutdown/hand-back.js'

/** The feedback edges of the outcomes: stages built after them, reached through the loop-backs. */
export interface OutcomeBackPorts {
  /** Whether work is left outside the outcomes: queued, running, overdue or backing off. */
  workLeft(): boolean
  /** Records a success on the failure side: breakers, the failure-exit window, the trace. */
  succeeded(m: Envelope, attempt: number, startedAt: number, now: number): void
}

/** Where an outcome's message or its news goes besides the counters. */
export interface OutcomeSinkPorts<M extends MessageMap> {
  readonly deadLetters: Pick<DeadLetterStore, 'add'>
  /** A stop's snapshot being written. */
  readonly handBack: Pick<HandBack, 'write'>
  /** The requests waiting for an outcome (`loop.request()`). */
  readonly requests: Pick<Requests, 'size' | 'succeeded' | 'failed' | 'failedWith' | 'takesFailure'>
  readonly journal: Pick<Journal<M>, 'letterOf' | 'saved' | 'touch'> | undefined
  /** The per-message log (`messageLog` option), if on. */
  readonly messageLog: MessageLogger | undefined
}

/** The parts an outcome touches. */
export interface OutcomeParts<M extends MessageMap> {
  readonly clock: { now(): number }
  readonly events: LoopEmitter<M>
  readonly metrics: LoopMetrics
  /** The per-post side tables an ended message leaves. */
  readonly records: RecordParts
  /** Keys held by ended messages go back to the queue; its entry count tells new work from none. */
  readonly queue: Pick<RunQueue, 'release' | 'entries'>
  readonly sinks: OutcomeSinkPorts<M>
  readonly backs: OutcomeBackPorts
}
