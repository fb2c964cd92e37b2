/**
 * Where every accepted message ends (I1). This is the only writer of a message's final outcome —
 * `succeeded`, `dead-lettered`, `request-failed`, `dropped`, `cancelled`, `snapshotted` — and every
 * outcome takes its effects in one order:
 *
 * 1. **state**: `where = Done` (nothing else may start, cancel or hand it back);
 * 2. **key**: a key it holds is released (the next message of the key may run);
 * 3. **counters**: the outcome's counter;
 * 4. **ledger**: the idempotency key becomes `done` / `failed`, is released, or stays held (handed back);
 * 5. **side tables**: the per-post extras go;
 * 6. **trace**: the final transition (it retires the trace);
 * 7. **events**: user-visible listeners, last — one of them may call back into the loop, and finds the
 *    message finished everywhere; the outcome's own event, then the per-message log line and `finished`
 *    (the last event of every message, whatever its outcome);
 * 8. **idle**: when nothing is left, `idle` fires and `drain()` waiters resolve.
 *
 * I1 then reads: `accepted = succeeded + dead-lettered + request-failed + dropped + cancelled +
 * snapshotted + what the holders (queue, wheel, breakers, pool) hold`.
 *
 * @module
 */
import type { DropReason } from '../contracts/events.js'
import type { DeadLetter, ErrorInfo } from '../contracts/failures.js'
import type { Message, MessageMap } from '../contracts/message.js'
import type { FinishedSummary, Outcome } from '../contracts/outcomes.js'
import type { SnapshotState } from '../contracts/snapshot.js'
import type { Trace } from '../failure/trace-record.js'
import { NO_HEADERS } from '../headers.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { rethrowLater } from '../internal/loop-emitter.js'
import { fieldsOf, type RecordParts } from '../journal/records.js'
import { logLine, summarize } from './finished.js'
import type { OutcomeBackPorts, OutcomeParts, OutcomeSinkPorts } from './outcome-ports.js'

// The per-message log's message.
const FINISHED = 'message finished'

/** The loop's outcomes, and the idle check that follows each. */
export class Outcomes<M extends MessageMap> {
  readonly #p: OutcomeParts<M>
  // The parts read per message, kept at hand (one load each instead of two).
  readonly #records: RecordParts
  readonly #sinks: OutcomeSinkPorts<M>
  readonly #backs: OutcomeBackPorts
  // Failed messages whose failure is being handled (user code runs: the classifier, listeners):
  // not finished, not idle, and held by no structure meanwhile.
  #inTransit = 0
  // The queue's entry count when `idle` last fired: it fires again only once work entered since.
  #idleAt = -1
  // Resolvers of `drain()`, settled at the next idle.
  #idleWaiters: (() => void)[] = []

  /** @param parts - the stages an outcome updates */
  constructor(parts: OutcomeParts<M>) {
    this.#p = parts
    this.#records = parts.records
    this.#sinks = parts.sinks
    this.#backs = parts.backs
  }

  /**
   * The `succeeded` outcome of a message whose attempt just returned.
   */
  succeeded(m: Envelope, durationMs: number, attempt: number, startedAt: number, now: number, value: unknown): void {
    const summary = this.#wanted()
      ? summarize('succeeded', m, this.#records.traces.of(m), now, { attempt, startedAt, durationMs })
      : undefined
    this.#finish(m, true)
    this.#p.metrics.succeeded++
    const ledger = this.#records.ledger.current
    if (ledger !== undefined) {
      this.#p.events.userCodeRan() // an idempotency store's set() may be user code
      ledger.ended(m, 'done', now)
    }
    this.#records.extras.forget(m)
    this.#backs.succeeded(m, attempt, startedAt, now)
    if (this.#sinks.requests.size > 0) this.#sinks.requests.succeeded(m, value)
    const events = this.#p.events
    if (events.hears.succeeded) events.emit('succeeded', m as unknown as Message<M>, durationMs)
    if (summary !== undefined) this.#announce(m, summary)
    this.idleCheck()
  }

  /**
   * The `dead-lettered` outcome: the letter is kept in the store (the sink, alerts and the event
   * follow from the failure side, after its own `failed` event).
   */
  deadLettered(
    m: Envelope,
    letter: Omit<DeadLetter, 'idempotencyKey' | 'checkpoint' | 'headers'>,
    lastError: unknown,
  ): DeadLetter {
    const key = this.#records.ledger.current?.keyOf(m)
    const checkpoint = this.#records.extras.checkpointOf(m)
    const headers = m.headers
    const full: DeadLetter = {
      ...(key === undefined ? {} : { idempotencyKey: key }),
      ...(checkpoint === undefined ? {} : { checkpoint }),
      ...(headers === NO_HEADERS ? {} : { headers }),
      ...letter,
    }
    this.#finish(m, true)
    this.#p.metrics.deadLettered++
    this.#records.ledger.current?.ended(m, 'failed')
    this.#records.extras.forget(m)
    const kept = this.#sinks.journal?.letterOf(m, full) ?? full // as it was posted and committed
    this.#sinks.deadLetters.add(kept)
    this.#records.traces.note(m, 'dead-lettered', letter.at, undefined, full.reason)
    if (this.#sinks.requests.size > 0) this.#sinks.requests.failed(m, 'dead-lettered', full.reason, lastError)
    return kept
  }

  /**
   * The end of a dead letter's announcement (the failure side's `dead-lettered` event went out): its
   * log line and `finished`.
   * @param trace - the message's trace, retired by now (it keeps the attempts)
   */
  deadLetterAnnounced(m: Envelope, letter: DeadLetter, trace: Trace): void {
    this.failureAnnounced(m, 'dead-lettered', trace, letter.at, letter.reason, letter.error)
  }

  /** Whether a request waits for `m` and takes its failure for good (see {@link Outcomes.requestFailed}). */
  requestTakes(m: Envelope): boolean {
    return this.#sinks.requests.size > 0 && this.#sinks.requests.takesFailure(m)
  }

  /**
   * The `request-failed` outcome: `m` failed for good and its request's caller takes the error — the
   * promise rejects with `lastError`, as the handler threw it. Nothing is dead-lettered; the ledger
   * counts the key `failed` as for a dead letter; a journal drops the message's row.
   * @param reason - `non-retryable` or `exhausted`
   */
  requestFailed(m: Envelope, reason: string, lastError: unknown, now: number): void {
    this.#finish(m, true)
    this.#p.metrics.requestFailed++
    this.#records.ledger.current?.ended(m, 'failed')
    this.#records.extras.forget(m)
    this.#records.traces.note(m, 'request-failed', now, undefined, reason)
    this.#sinks.requests.failedWith(m, lastError)
  }

  /**
   * The last step of a failure's outcome (`dead-lettered`, `request-failed`), after the failure
   * side's events: the log line and `finished`.
   */
  failureAnnounced(m: Envelope, outcome: Outcome, trace: Trace, at: number, reason: string, error: ErrorInfo): void {
    if (!this.#wanted()) return
    this.#announce(m, summarize(outcome, m, trace, at, trace.lastAttempt, reason, error))
  }

  /**
   * The `dropped` outcome: by the overflow policy, or (`duplicate`) an async ledger found its key
   * taken before it ran — the entry is someone else's and the ledger is left alone.
   */
  dropped(m: Envelope, reason: DropReason, holdsKey = false): void {
    const summary = this.#unran('dropped', m, reason)
    this.#finish(m, holdsKey)
    this.#p.metrics.dropped++
    if (reason === 'duplicate') this.#records.ledger.current?.handedBack(m)
    else this.#release(m)
    this.#records.extras.forget(m)
    this.#records.traces.note(m, 'dropped', this.#p.clock.now())
    if (this.#sinks.requests.size > 0) this.#sinks.requests.failed(m, 'dropped', reason)
    this.#p.events.emit('dropped', m as unknown as Message<M>, reason)
    if (summary !== undefined) this.#announce(m, summary)
  }

  /** The `cancelled` outcome (a stop without drain, `DelayedMessage.cancel()`, `loop.cancel()`). */
  cancelled(m: Envelope): void {
    const summary = this.#unran('cancelled', m)
    this.#finish(m, false)
    this.#p.metrics.cancelled++
    this.#release(m)
    this.#records.extras.forget(m)
    this.#records.traces.note(m, 'cancelled', this.#p.clock.now())
    if (this.#sinks.requests.size > 0) this.#sinks.requests.failed(m, 'cancelled', 'cancelled before it ran')
    this.#p.events.emit('cancelled', m as unknown as Message<M>)
    if (summary !== undefined) this.#announce(m, summary)
  }

  /**
   * The `snapshotted` outcome: written into the stop's snapshot with what it needs to continue
   * elsewhere; its idempotency key stays held (the restore takes it over).
   * @param dueAt - clock time, for delayed and retry-scheduled messages
   */
  snapshotted(m: Envelope, state: SnapshotState, dueAt?: number, holdsKey = false): void {
    const { extras, traces, ledger } = this.#records
    const summary = this.#unran('snapshotted', m, state)
    const entry = fieldsOf(this.#records, m)
    this.#sinks.journal?.saved(m, state, entry, dueAt) // with a journal, its row stays for the next start
    this.#finish(m, holdsKey)
    this.#sinks.handBack.write(m, state, entry, dueAt)
    this.#p.metrics.snapshotted++
    ledger.current?.handedBack(m)
    extras.forget(m)
    traces.note(m, 'snapshotted', this.#p.clock.now(), undefined, state)
    if (this.#sinks.requests.size > 0) this.#sinks.requests.failed(m, 'snapshotted', `handed back by a stop (${state})`)
    if (summary !== undefined) this.#announce(m, summary)
  }

  /** A failure is being handled (user code will run); {@link Outcomes.landed} when it is placed. */
  inTransit(): void {
    this.#inTransit++
  }

  /** The failure being handled was placed (a retry, a dead letter, the snapshot). */
  landed(): void {
    this.#inTransit--
  }

  /** Nothing is queued, running, overdue, backing off or in transit. */
  get idle(): boolean {
    return this.#inTransit === 0 && !this.#backs.workLeft()
  }

  /** Resolves at the next idle (at once when idle). */
  drain(): Promise<void> {
    if (this.idle) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /** When idle: `idle` fires (once per transition: not again before another message ends) and `drain()` waiters resolve. */
  idleCheck(): void {
    if (!this.idle) return
    const entries = this.#p.queue.entries
    if (entries !== this.#idleAt) {
      this.#idleAt = entries
      this.#p.events.emit('idle')
    }
    const waiters = this.#idleWaiters
    if (waiters.length > 0) {
      this.#idleWaiters = []
      for (const resolve of waiters) resolve()
    }
  }

  // Whether a summary is wanted: `finished` has listeners, or the per-message log is on.
  #wanted(): boolean {
    return this.#p.events.hears.finished || this.#sinks.messageLog !== undefined
  }

  // The summary of an outcome that ends a message outside an attempt (read before its trace retires).
  #unran(outcome: Outcome, m: Envelope, reason?: string): FinishedSummary | undefined {
    if (!this.#wanted()) return undefined
    return summarize(outcome, m, this.#records.traces.of(m), this.#p.clock.now(), undefined, reason)
  }

  // The last step of every outcome: the per-message log line, then `finished`. A logger that throws is
  // reported as a throwing listener is (re-thrown on a microtask), never in the outcome's way.
  // Returns whether user code ran.
  #announce(m: Envelope, summary: FinishedSummary): void {
    const log = this.#sinks.messageLog
    const events = this.#p.events
    if (log !== undefined) {
      events.userCodeRan()
      try {
        if (summary.outcome === 'dead-lettered' || summary.outcome === 'dropped')
          log.warn(logLine(m, summary), FINISHED)
        else log.info(logLine(m, summary), FINISHED)
      } catch (error) {
        rethrowLater(error)
      }
    }
    if (events.hears.finished) events.emit('finished', m as unknown as Message<M>, summary)
  }

  // The ledger step of a message that will not run: its key is released — unless it committed, in
  // which case the key stays `committed` (its side effect happened: a redelivery must not repeat it).
  #release(m: Envelope): void {
    const ledger = this.#records.ledger.current
    if (ledger === undefined) return
    if (this.#records.extras.checkpointOf(m) === undefined) ledger.ended(m, 'released')
    else ledger.handedBack(m)
  }

  // Steps 1 and 2: nothing may act on `m` any more, and its key moves on.
  #finish(m: Envelope, holdsKey: boolean): void {
    m.where = Where.Done
    if (holdsKey && m.key !== undefined) this.#p.queue.release(m.key)
    this.#sinks.journal?.touch(m) // its row goes at the next commit
  }
}
