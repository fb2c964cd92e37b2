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
import { type Attempt, type DeadlineScheduler, StallDetector, Watchdog } from '@flowing/watchdog'
import { Admission } from '../admission/admission.js'
import { Pacing } from '../admission/pacing.js'
import { LoopPressure } from '../admission/pressure.js'
import type { Clock } from '../clock.js'
import { Registry } from '../dispatcher/registry.js'
import { DeadLetterStore } from '../failure/dead-letters.js'
import { Failures } from '../failure/failures.js'
import { Traces } from '../failure/trace.js'
import { Idempotency, LedgerSlot } from '../idempotency/ledger.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { PostExtras } from '../internal/post-extras.js'
import { ReleasableClock } from '../internal/releasable-clock.js'
import { Journal } from '../journal/journal.js'
import { JournaledKeys } from '../journal/keys.js'
import { recoverJournal } from '../journal/recovery.js'
import type { LoopEmitter } from '../loop/events.js'
import { type LoopOptions, type ResolvedLoopOptions, resolveOptions } from '../loop/options.js'
import type { MessageMap } from '../message.js'
import { LoopMetrics, type MetricsSnapshot } from '../metrics/loop-metrics.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import { Attempts } from '../pool/attempts.js'
import { TimeoutBreakers } from '../pool/timeout-breakers.js'
import { WorkerPool } from '../pool/worker-pool.js'
import { HeapReadyQueue } from '../queue/heap-ready-queue.js'
import { LevelQueue } from '../queue/level-queue.js'
import { RunQueue } from '../queue/run-queue.js'
import { Urgency } from '../queue/urgency.js'
import { HandBack } from '../shutdown/hand-back.js'
import { breakerHolder, delayedHolder, type Holder, queueHolder, retryHolder } from '../shutdown/holders.js'
import type { RestoreParts } from '../shutdown/restore.js'
import { Stopper } from '../shutdown/stopper.js'
import { DelayedPosts } from '../timers/delayed-posts.js'
import { Lifecycle } from './lifecycle.js'
import { Outcomes } from './outcomes.js'

const RESOLVED = Promise.resolve()

/** One loop's stages. The public `Loop` is a front over this. */
export class Engine<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly clock: Clock
  // The clock of the timers a stopped loop may still hold (the wheel's, the stall check): released at stop.
  readonly lingering: ReleasableClock
  readonly events: LoopEmitter<M>
  readonly metrics = new LoopMetrics()
  readonly registry = new Registry<M>()
  readonly lifecycle: Lifecycle
  readonly queue: RunQueue
  readonly extras = new PostExtras()
  readonly traces: Traces
  readonly ledger: LedgerSlot
  // The journal store's stage, and the ledger's durable keys (a loop created with `store`).
  readonly journal: Journal<M> | undefined
  readonly keys: JournaledKeys | undefined
  readonly wheel: WheelDriver<Envelope | Attempt>
  readonly delayed: DelayedPosts
  readonly outcomes: Outcomes<M>
  readonly breakers: TimeoutBreakers | undefined
  readonly pressure: LoopPressure | undefined
  readonly admission: Admission<M>
  readonly pacing: Pacing<M>
  readonly failures: Failures<M>
  readonly watchdog: Watchdog
  readonly stall: StallDetector | undefined
  readonly attempts: Attempts<M>
  readonly pool: WorkerPool<AttemptContext<M>>
  readonly handBack: HandBack
  // Every stage holding accepted messages outside the pool (a stop hands them over).
  readonly holders: readonly Holder[]
  readonly stopper: Stopper<M>
  // A pump is queued on the microtask queue; posts in one synchronous burst share it.
  #pumpScheduled = false
  readonly #pumpNow = (): void => {
    this.#pumpScheduled = false
    this.pool.pump()
  }
  readonly schedulePump = (): void => {
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    RESOLVED.then(this.#pumpNow) // a resolved-promise hop: ~3× cheaper than queueMicrotask in Node
  }

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
    const urgency = new Urgency(o.agingMs)
    this.queue = new RunQueue(o.queue === 'heap' ? new HeapReadyQueue(urgency) : new LevelQueue(urgency), urgency)
    this.traces = new Traces(o.traces === 'all', o.keepTraces)
    this.lifecycle = new Lifecycle(o.autoStart, (next, previous) => events.emit('state', next, previous))
    this.journal = o.store === undefined ? undefined : new Journal<M>(o.store, this)
    this.keys = this.journal !== undefined && o.idempotency?.store === undefined ? this.#newKeys() : undefined
    this.ledger = new LedgerSlot(() => this.#newLedger(), o.idempotency !== undefined)
    this.wheel = this.#newWheel()
    const scheduler = this.wheel as DeadlineScheduler<Envelope>
    const handBack = new HandBack(this.clock, () => this.stopper.cutOff())
    this.handBack = handBack
    const deadLetters = new DeadLetterStore(
      o.deadLetters.maxSize,
      (letter) => this.admission.replay(letter, false) as never,
    )
    const messageLog = o.messageLog === false ? undefined : o.messageLog
    this.outcomes = new Outcomes<M>({ ...this.#common(), deadLetters, handBack, journal: this.journal, messageLog })
    this.delayed = new DelayedPosts(
      scheduler,
      { enterDue: (m) => this.admission.enterDue(m), cancelled: (m) => this.outcomes.cancelled(m) },
      Where.Delayed,
    )
    this.breakers = this.#newBreakers()
    const bp = o.backpressure
    this.pressure =
      bp === false ? undefined : new LoopPressure(bp, o.capacity, this.clock, (t) => this.pacing.onPressure(t))
    this.admission = new Admission<M>(this)
    this.pacing = new Pacing<M>(this)
    this.failures = this.#newFailures(deadLetters, urgency)
    this.outcomes.observeSuccesses(this.failures)
    this.watchdog = this.#newWatchdog()
    this.stall = this.#newStallDetector()
    this.attempts = new Attempts<M>(this)
    this.pool = this.#newPool()
    this.admission.connect(this.schedulePump, () => this.load())
    this.outcomes.watch(
      () =>
        this.queue.length > 0 || this.pool.running > 0 || this.delayed.overdue > 0 || this.failures.retries.length > 0,
    )
    this.holders = [
      retryHolder(this.failures.retries, this.queue),
      breakerHolder(this.failures.circuits, this.queue),
      delayedHolder(this.delayed),
      queueHolder(this.queue),
    ]
    this.stopper = new Stopper<M>(this)
    this.#journalTransitions()
    this.stall?.start()
  }

  /** Recovers the journal, once, before the first start (see `recoverJournal`). */
  recover(): void {
    if (this.journal !== undefined)
      recoverJournal({ ...this.restoreParts, lifecycle: this.lifecycle, journal: this.journal, keys: this.keys })
  }

  /** What a restore touches. */
  get restoreParts(): RestoreParts<M> {
    return this
  }

  /** The queue's load, as overload errors and metrics report it. */
  load(): { queued: number; capacity: number; running: number; waitingProducers: number } {
    return {
      queued: this.queue.length,
      capacity: this.options.capacity,
      running: this.pool.running,
      waitingProducers: this.pacing.waiting,
    }
  }

  /** Counters, gauges and histograms (a fresh plain-data snapshot). */
  snapshotMetrics(): MetricsSnapshot {
    const load = this.load()
    const m = this.metrics
    m.lateCompletions = this.watchdog.lateCompletions
    m.fenced = this.watchdog.stats().fencedEffects + this.attempts.fencedUnguarded
    return m.snapshot(
      {
        // Named, not spread: a spread literal that goes on with more fields costs ~15 µs a call in V8.
        queued: load.queued,
        capacity: load.capacity,
        running: load.running,
        waitingProducers: load.waitingProducers,
        parked: this.queue.parked,
        workers: this.pool.size,
        busyKeys: this.queue.busyKeys,
        pressure: this.pressure?.level ?? 'normal',
        zombies: this.watchdog.zombieCount,
        delayed: this.delayed.scheduled,
        overdue: this.delayed.overdue,
        retrying: this.failures.retries.length,
        held: this.queue.held,
        deadLetters: this.failures.deadLetters.size,
        fill: load.queued / load.capacity,
      },
      this.pressure?.stats(this.queue.length),
      this.journal?.stats(),
    )
  }

  /** Timed-out handlers still unsettled after `graceMs`. */
  zombies(): { epoch: number; label: string; ageMs: number }[] {
    return this.watchdog.zombies().map(({ epoch, label, ageMs }) => ({ epoch, label, ageMs }))
  }

  // The parts most stages share.
  #common() {
    return {
      options: this.options,
      clock: this.clock,
      queue: this.queue,
      metrics: this.metrics,
      ledger: this.ledger,
      extras: this.extras,
      traces: this.traces,
      events: this.events,
    }
  }

  // The worker pool: its clock lets go of the process at stop (the saturation check's timer).
  #newPool(): WorkerPool<AttemptContext<M>> {
    const o = this.options
    // Saturation (every worker stuck while work waits) is always watched: the stall threshold.
    const saturatedMs = (typeof o.stall === 'object' ? o.stall.noProgressMs : undefined) ?? 30_000
    return new WorkerPool(
      this.attempts,
      this.lingering,
      o.workers,
      o.dispatchBudget,
      o.dispatchBudgetMs,
      o.maxZombies,
      saturatedMs,
    )
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
    return new Failures<M>(
      {
        ...this.#common(),
        lifecycle: this.lifecycle,
        registry: this.registry,
        outcomes: this.outcomes,
        deadLetters,
        wheel: this.wheel as DeadlineScheduler<Envelope>,
        entered: () => this.admission.queueChanged(),
        failureExit: (report) => this.stopper.failureExit(report),
      },
      urgency.compare,
    )
  }

  // Handler deadlines (`timeoutMs`) on the shared wheel; a timeout frees the attempt's slot.
  #newWatchdog(): Watchdog {
    return new Watchdog({
      timers: this.clock,
      scheduler: this.wheel as DeadlineScheduler<Attempt>,
      graceMs: this.options.graceMs,
      onTimeout: (attempt, error) => this.pool.detach((ctx) => ctx.guard === attempt, error, true),
    })
  }

  // One timing wheel and one real timer for delayed messages, retries' back-offs and handler deadlines.
  #newWheel(): WheelDriver<Envelope | Attempt> {
    const o = this.options
    return new WheelDriver<Envelope | Attempt>({
      timers: this.lingering,
      budget: o.dispatchBudget,
      // Delayed messages, retries (they keep places in the queue) and handler deadlines.
      maxPending: Math.min(16_000_000, o.maxDelayed + o.capacity + 2 * 65_536),
      onDue: (due) => {
        for (const item of due) {
          if (Watchdog.owns(item)) this.watchdog.onDue(item)
          else if (item.where === Where.Backoff) this.failures.retries.due(item)
          else if (item.where === Where.Delayed) this.delayed.due(item)
          // else: cancelled or handed back by a listener of an earlier item of this batch
        }
      },
    })
  }

  // Per-type escalation after repeated timeouts (`timeoutBreaker`).
  #newBreakers(): TimeoutBreakers | undefined {
    const tb = this.options.timeoutBreaker
    if (tb === false) return undefined
    return new TimeoutBreakers(tb.threshold ?? 5, tb.cooldownMs ?? 30_000, this.clock, (change) => {
      const heard = this.events.emit('timeout-breaker', change)
      return this.events.emit('breaker', change) || heard // (the deprecated name, while it lives)
    })
  }

  // Reports a blocked event loop or no progress while work waits (`stall` option).
  #newStallDetector(): StallDetector | undefined {
    const stall = this.options.stall
    if (stall === false) return undefined
    return new StallDetector({
      ...(stall === true ? {} : stall),
      timers: this.clock,
      onStall: (report) => this.events.emit('stall', report),
      busy: () => this.queue.length > 0,
      describeRunning: () => this.pool.attempts().map((ctx) => ctx.describe(this.clock.now())),
    })
  }
}
