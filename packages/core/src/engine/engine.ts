/**
 * The composition root: builds every stage of one loop once, in pipeline order, and wires their
 * ports. Nothing here runs per message; the stages do.
 *
 * ```
 *  admission ─▶ queue ─▶ pool (attempts) ─▶ outcomes
 *     ▲  pacing   ▲          │    └─ failures (retries, dead letters, breakers) ─┘
 *     │           └─ timers (delayed posts and back-offs on the one wheel)
 *  lifecycle · ledger · stopper (hand-back, snapshot) · observe (metrics, traces)
 * ```
 *
 * @module
 */
import { WheelDriver } from '@flowing/timing-wheel'
import { type Attempt, type DeadlineScheduler, type StallDetector, Watchdog } from '@flowing/watchdog'
import { Admission } from '../admission/admission.js'
import { Entries } from '../admission/entries.js'
import { Pacing } from '../admission/pacing.js'
import { LoopPressure } from '../admission/pressure.js'
import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { LoopOptions, ResolvedLoopOptions } from '../contracts/options.js'
import type { RegisterOptions } from '../dispatcher/handler.js'
import { Registry } from '../dispatcher/registry.js'
import type { QueueLoad } from '../errors.js'
import { DeadLetterStore } from '../failure/dead-letters.js'
import { Failures } from '../failure/failures.js'
import { checkRetryOptions, mergeRetry } from '../failure/retry-policy.js'
import { Traces } from '../failure/trace.js'
import { Idempotency, LedgerSlot } from '../idempotency/ledger.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import { PostExtras } from '../internal/post-extras.js'
import { ReleasableClock } from '../internal/releasable-clock.js'
import * as check from '../internal/validate.js'
import { Journal } from '../journal/journal.js'
import { JournaledKeys } from '../journal/keys.js'
import type { RecordParts } from '../journal/records.js'
import { recoverJournal } from '../journal/recovery.js'
import { Lifecycle } from '../lifecycle/lifecycle.js'
import type { DispatchGate } from '../limits/dispatch-gate.js'
import { Limiter } from '../limits/limiter.js'
import type { RateLimits } from '../limits/rate-limits.js'
import { LoopMetrics, type MetricsSnapshot } from '../metrics/loop-metrics.js'
import { resolveOptions } from '../options/resolve.js'
import { Outcomes } from '../outcomes/outcomes.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import { Attempts } from '../pool/attempts.js'
import type { Autoscaler } from '../pool/autoscaler.js'
import type { TimeoutBreakers } from '../pool/timeout-breakers.js'
import type { WorkerPool } from '../pool/worker-pool.js'
import { HeapReadyQueue } from '../queue/heap-ready-queue.js'
import { LevelQueue } from '../queue/level-queue.js'
import { RunQueue } from '../queue/run-queue.js'
import { Urgency } from '../queue/urgency.js'
import { Cancels } from '../requests/cancels.js'
import { Requests } from '../requests/requests.js'
import { HandBack } from '../shutdown/hand-back.js'
import {
  breakerHolder,
  delayedHolder,
  type Holder,
  holderList,
  type LoopHolders,
  limitHolder,
  queueHolder,
} from '../shutdown/holders.js'
import { Stopper } from '../shutdown/stopper.js'
import { DelayedPosts } from '../timers/delayed-posts.js'
import { newFlowControl, newGate } from './flow-control.js'
import { snapshotMetrics } from './gauges.js'
import { LoopBacks } from './loop-backs.js'
import { newAutoscaler, newPool, resizeByHand } from './scaling.js'
import { newStallDetector, newTimeoutBreakers } from './watchers.js'

/** One loop's stages. The public `Loop` is a front over this. */
export class Engine<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly clock: Clock
  // The clock of the timers a stopped loop may still hold (the wheel's, the stall check): released at stop.
  readonly lingering: ReleasableClock
  readonly events: LoopEmitter<M>
  readonly metrics = new LoopMetrics()
  readonly registry: Registry<M>
  readonly lifecycle: Lifecycle
  readonly queue: RunQueue
  readonly extras = new PostExtras()
  readonly traces: Traces
  readonly ledger: LedgerSlot
  // The per-post side tables (extras, traces, the ledger) that stages read and an outcome clears.
  readonly records: RecordParts
  // The journal store's stage, and the ledger's durable keys (a loop created with `store`).
  readonly journal: Journal<M> | undefined
  readonly keys: JournaledKeys | undefined
  readonly wheel: WheelDriver<Envelope | Attempt | Limiter>
  readonly delayed: DelayedPosts
  readonly outcomes: Outcomes<M>
  readonly breakers: TimeoutBreakers | undefined
  readonly pressure: LoopPressure | undefined
  readonly admission: Admission<M>
  readonly pacing: Pacing<M>
  // Every way in (post, send, request, delays, follow-ups, replays, restores): the one writer of `posted`.
  readonly entries: Entries<M>
  readonly failures: Failures<M>
  readonly watchdog: Watchdog
  readonly stall: StallDetector | undefined
  readonly attempts: Attempts<M>
  readonly pool: WorkerPool<AttemptContext<M>>
  // The worker autoscaler (`workers: { min, max }`); off for a fixed count and after a manual resize.
  readonly autoscaler: Autoscaler | undefined
  readonly handBack: HandBack
  // Every stage holding accepted messages outside the pool (a stop hands them over).
  readonly holders: readonly Holder[]
  readonly #holders: LoopHolders
  readonly stopper: Stopper<M>
  // Flow control: rate limits, the dispatch gate, requests and per-message cancel.
  readonly limits: RateLimits
  readonly gate: DispatchGate | undefined
  readonly requests: Requests
  readonly cancels: Cancels<M>
  // The edges against the build order, bound once every stage exists.
  readonly #backs = new LoopBacks<M>()
  /** Schedules the pool's next pass (one per synchronous burst of posts). */
  readonly schedulePump = this.#backs.schedulePump

  /**
   * @param options - the user's options (validated here)
   * @param events - the front's emitter
   * @throws InvalidArgumentError for a bad option
   */
  constructor(options: LoopOptions | undefined, events: LoopEmitter<M>) {
    const o = resolveOptions(options)
    this.options = o
    this.clock = o.clock
    this.lingering = new ReleasableClock(o.clock)
    this.events = events
    this.registry = new Registry<M>(o.timeoutMs)
    const urgency = new Urgency(o.agingMs)
    this.queue = new RunQueue(o.queue === 'heap' ? new HeapReadyQueue(urgency) : new LevelQueue(urgency), urgency)
    this.traces = new Traces(o.traces === 'all', o.keepTraces)
    this.lifecycle = new Lifecycle(o.autoStart, (next, previous) => events.emit('state', next, previous))
    this.ledger = new LedgerSlot(() => this.#newLedger(), o.idempotency !== undefined) // made when first needed
    const { clock, extras, traces, ledger } = this
    this.records = { extras, traces, ledger }
    this.journal =
      o.store === undefined ? undefined : new Journal<M>(o.store, { clock, events, extras, traces, ledger })
    this.keys = this.journal !== undefined && o.idempotency?.store === undefined ? this.#newKeys() : undefined
    this.wheel = this.#newWheel()
    const scheduler = this.wheel as DeadlineScheduler<Envelope>
    const backs = this.#backs
    this.handBack = new HandBack(this.clock, backs.cutOff)
    const deadLetters = new DeadLetterStore(o.deadLetters.maxSize, backs.replay as never)
    this.requests = new Requests(this.clock, backs.cancel)
    this.outcomes = this.#newOutcomes(deadLetters)
    const { registry, queue, metrics, records } = this
    const holds = { queue, wheel: this.wheel, pump: backs.schedulePump }
    this.limits = newFlowControl({ options: o, clock, events, metrics, registry, records, holds }, urgency)
    const gated = { options: o, events, queue, limits: this.limits, lingering: this.lingering }
    this.gate = newGate({ ...gated, schedulePump: backs.schedulePump })
    const cancelled = (m: Envelope) => this.outcomes.cancelled(m)
    this.delayed = new DelayedPosts(scheduler, { enterDue: backs.enterDue, cancelled }, Where.Delayed)
    this.breakers = newTimeoutBreakers({ options: o, clock: this.clock, events })
    const bp = o.backpressure
    this.pressure = bp === false ? undefined : new LoopPressure(bp, o.capacity, this.clock, backs.onPressure)
    this.admission = this.#newAdmission()
    this.pacing = this.#newPacing()
    this.failures = this.#newFailures(deadLetters, urgency)
    this.entries = this.#newEntries()
    this.watchdog = this.#newWatchdog()
    this.stall = newStallDetector({ ...gated, clock: this.clock, gate: this.gate, running: backs.running })
    this.attempts = this.#newAttempts()
    this.pool = newPool({ options: o, attempts: this.attempts, lingering: this.lingering })
    const { lingering, lifecycle } = this
    this.autoscaler = newAutoscaler({ options: o, lingering, queue, pool: this.pool, metrics, lifecycle, events })
    this.#holders = this.#newHolders()
    this.holders = holderList(this.#holders)
    this.cancels = this.#newCancels()
    this.stopper = this.#newStopper()
    this.#journalTransitions()
    this.stall?.start()
    const { stopper, entries, cancels, admission, pacing, pool, failures, delayed } = this
    backs.bind({ stopper, entries, cancels, admission, pacing, pool, failures, queue, delayed, capacity: o.capacity })
    if (this.lifecycle.state === 'running') this.stopper.armTimeLimit() // autoStart: running from now
  }

  /**
   * Before each start: recovers the journal, once, before the first start (see `recoverJournal`),
   * and arms the time limit.
   */
  recover(): void {
    const { journal, keys, ledger } = this
    if (journal !== undefined) {
      recoverJournal({
        lifecycle: this.lifecycle,
        journal,
        restore: (snapshot) => this.entries.restore(snapshot, 0, this.options.workers),
        deadLetters: this.failures.deadLetters,
        loadKeys: (records) => {
          ledger.ensure()
          keys?.load(records)
        },
        clock: this.clock,
        events: this.events,
      })
    }
    this.stopper.armTimeLimit()
  }

  /**
   * Checks registration options that depend on the loop's: a type's retry policy must make sense
   * once layered over the loop's (capMs ≥ baseMs). Called before anything is registered.
   */
  checkRegistration(options: RegisterOptions | undefined): void {
    const retry = check.readably('options.retry', () => options?.retry)
    check.readably(
      'options.retry',
      () => {
        if (retry !== undefined && retry !== null && typeof retry === 'object') {
          mergeRetry('options.retry', checkRetryOptions('options.retry', retry), this.options.retry)
        }
      },
      retry,
    )
  }

  /** A type was registered: breakers start watching if it has one. */
  registered(type: string): void {
    if (this.registry.breakerFor(type) !== undefined) this.failures.enableBreakers()
  }

  /** The queue's load, as overload errors and metrics report it. */
  load(): QueueLoad {
    return this.#backs.load()
  }

  /** Counters, gauges and histograms (a fresh plain-data snapshot). */
  snapshotMetrics(): MetricsSnapshot {
    const { metrics, queue, pool, watchdog, attempts, journal, pressure, delayed, failures, gate } = this
    const waits = { pressure, delayed, failures, gate }
    return snapshotMetrics({ metrics, queue, pool, watchdog, attempts, journal, waits }, this.load())
  }

  /** Timed-out handlers still unsettled after `graceMs`. */
  zombies(): { epoch: number; label: string; ageMs: number }[] {
    return this.watchdog.zombies().map(({ epoch, label, ageMs }) => ({ epoch, label, ageMs }))
  }

  // Every outcome, and what each tells: the per-message log, the requests waiting.
  #newOutcomes(deadLetters: DeadLetterStore): Outcomes<M> {
    const { clock, events, metrics, records, queue, handBack, requests, journal, options } = this
    const messageLog = options.messageLog === false ? undefined : options.messageLog
    const sinks = { deadLetters, handBack, requests, journal, messageLog }
    return new Outcomes<M>({ clock, events, metrics, records, queue, sinks, backs: this.#backs })
  }

  // The ways in, with what a restore touches.
  #newEntries(): Entries<M> {
    const { options: o, clock, events, metrics, records, registry, admission, pacing, requests } = this
    const { queue, delayed, journal } = this
    const places = { queue, delayed, retries: this.failures.retries, admission, journal }
    const restore = { policy: { options: o, registry }, clock, events, metrics, records, places }
    const limits = { maxHops: o.maxHops, idPrefix: o.idPrefix }
    return new Entries<M>({ clock, metrics, limits, admission, pacing, requests, restore })
  }

  // Every stage holding accepted messages outside the pool: for a stop, a cancel, a search.
  #newHolders(): LoopHolders {
    return {
      retries: this.failures.retries,
      breakers: breakerHolder(this.failures.circuits, this.queue),
      limits: limitHolder(this.limits, this.queue),
      delayed: delayedHolder(this.delayed),
      queue: queueHolder(this.queue),
    }
  }

  // Per-message cancel, wherever the message waits.
  #newCancels(): Cancels<M> {
    return new Cancels<M>({
      holders: this.#holders,
      queue: this.queue,
      outcomes: this.outcomes,
      running: this.#backs.running,
      roomFreed: () => {
        this.pacing.roomFreed()
        this.admission.queueChanged()
      },
      seqOf: (id) => this.entries.seqOf(id),
    })
  }

  /** `loop.resize()`: a manual count turns the autoscaler off for good; a change emits `workers`. */
  resize(workers: number): void {
    const { autoscaler, pool, queue, clock, events } = this
    resizeByHand({ autoscaler, pool, queue, clock, events }, workers)
  }

  // The way in: validate, stamp, claim the key, place or refuse.
  #newAdmission(): Admission<M> {
    const { options, registry, clock, events, metrics, records, lifecycle, breakers, pressure, journal } = this
    const { queue, delayed, outcomes, requests } = this
    const backs = this.#backs
    const gates = { lifecycle, breakers, pressure, journal, load: backs.load }
    const places = { queue, delayed, outcomes, requests, cancel: backs.cancel, schedulePump: backs.schedulePump }
    const policy = { options, registry }
    return new Admission<M>({ policy, clock, events, metrics, records, gates, places })
  }

  // One attempt of one message: take, begin (its deadline), invoke, end.
  #newAttempts(): Attempts<M> {
    const { options, clock, events, registry, metrics, records, lifecycle, gate, queue, pacing, limits } = this
    const { watchdog, outcomes, failures, breakers, stall, journal, entries } = this
    const starts = { lifecycle, gate, queue, pacing, limits, timeoutMs: options.timeoutMs }
    const ends = { watchdog, outcomes, failures, breakers, stall, journal, entries }
    return new Attempts<M>({ clock, events, registry, metrics, records, starts, ends })
  }

  // The three exits: a draining stop, a stop without drain, a stop that hands back at its deadline.
  #newStopper(): Stopper<M> {
    const { options, clock, events, lifecycle, stall, gate, pacing, failures, lingering, journal } = this
    const { delayed, holders, pool, outcomes, handBack, schedulePump } = this
    const quiets = { stall, gate, pacing, failures, lingering, journal }
    const work = { delayed, holders, pool, outcomes, handBack, schedulePump }
    return new Stopper<M>({ options, clock, events, lifecycle, quiets, work })
  }

  // Producers waiting for room (`send`, `ready`), overdue delayed messages, pressure transitions.
  #newPacing(): Pacing<M> {
    const { options, clock, events, lifecycle, registry, admission, queue, pressure, delayed } = this
    const room = { queue, pressure, delayed }
    return new Pacing<M>({ options, clock, events, lifecycle, registry, admission, room })
  }

  // The idempotency ledger (made when first needed): its finished keys are journaled with a store.
  #newLedger(): Idempotency {
    const onError = (error: unknown, key: string) => this.events.emit('ledger-error', error, key)
    const options = this.options.idempotency ?? {}
    const keys = this.keys
    return new Idempotency(keys === undefined ? options : { ...options, store: keys }, this.clock, this.extras, onError)
  }

  #newKeys(): JournaledKeys {
    const journal = this.journal as Journal<M>
    return new JournaledKeys(this.options.idempotency?.maxKeys ?? 100_000, this.clock, journal)
  }

  // The waits and dead letters a restart must know reach the journal.
  #journalTransitions(): void {
    const journal = this.journal
    if (journal === undefined) return
    this.delayed.journalTo(journal)
    this.failures.retries.journalTo(journal)
    this.failures.deadLetters.watch((id, letter) => journal.letter(id, letter))
  }

  // Retries, dead letters, breakers, alerts, the failure exit.
  #newFailures(deadLetters: DeadLetterStore, urgency: Urgency): Failures<M> {
    const { options, registry, clock, events, metrics, records, queue, limits, outcomes, lifecycle } = this
    const wheel = this.wheel as DeadlineScheduler<Envelope>
    const holds = { wheel, queue, pump: this.schedulePump, limits }
    const exits = { outcomes, deadLetters, lifecycle, failureExit: this.#backs.failureExit }
    const policy = { options, registry }
    return new Failures<M>({ policy, clock, events, metrics, records, holds, exits }, urgency.compare)
  }

  // Handler deadlines (`timeoutMs`) on the shared wheel; a timeout frees the attempt's slot.
  #newWatchdog(): Watchdog {
    return new Watchdog({
      timers: this.clock,
      scheduler: this.wheel as DeadlineScheduler<Attempt>,
      graceMs: this.options.graceMs,
      onTimeout: this.#backs.timedOut,
    })
  }

  // One timing wheel and one real timer for delayed messages, retries' back-offs, handler deadlines
  // and rate limits' wake-ups.
  #newWheel(): WheelDriver<Envelope | Attempt | Limiter> {
    const o = this.options
    return new WheelDriver<Envelope | Attempt | Limiter>({
      timers: this.lingering,
      budget: o.dispatchBudget,
      // Delayed messages, retries (they keep places in the queue) and handler deadlines.
      maxPending: Math.min(16_000_000, o.maxDelayed + o.capacity + 2 * 65_536),
      onDue: (due) => {
        for (const item of due) {
          if (Watchdog.owns(item)) this.watchdog.onDue(item)
          else if (item instanceof Limiter) this.limits.due(item, this.clock.now())
          else if (item.where === Where.Backoff) this.failures.retries.due(item)
          else if (item.where === Where.Delayed) this.delayed.due(item)
          // else: cancelled or handed back by a listener of an earlier item of this batch
        }
      },
    })
  }
}
