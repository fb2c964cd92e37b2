import type { DeadlineScheduler, StallDetector } from '@flowing/watchdog'
import { Admission } from '../admission/admission.js'
import { Entries } from '../admission/entries.js'
import { Pacing } from '../admission/pacing.js'
import { LoopPressure } from '../admission/pressure.js'
import type { MessageMap } from '../contracts/message.js'
import type { LoopOptions, ResolvedLoopOptions } from '../contracts/options.js'
import { Registry } from '../dispatcher/registry.js'
import type { QueueLoad } from '../errors.js'
import { LoopStoppedError } from '../errors.js'
import { DeadLetterStore } from '../failure/dead-letters.js'
import { Failures } from '../failure/failures.js'
import { Traces } from '../failure/trace.js'
import { type Idempotency, LedgerSlot } from '../idempotency/ledger.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import { PostExtras } from '../internal/post-extras.js'
import { ReleasableClock } from '../internal/releasable-clock.js'
import type { RecordParts } from '../journal/records.js'
import { Lifecycle } from '../lifecycle/lifecycle.js'
import type { RateLimits } from '../limits/rate-limits.js'
import { LoopMetrics, type MetricsSnapshot } from '../metrics/loop-metrics.js'
import { resolveOptions } from '../options/resolve.js'
import { Outcomes } from '../outcomes/outcomes.js'
import { Attempts } from '../pool/attempts.js'
import type { Autoscaler } from '../pool/autoscaler.js'
import { HeapReadyQueue } from '../queue/heap-ready-queue.js'
import { LevelQueue } from '../queue/level-queue.js'
import { RunQueue } from '../queue/run-queue.js'
import { StartFilters } from '../queue/start-filters.js'
import { Urgency } from '../queue/urgency.js'
import { Cancels } from '../requests/cancels.js'
import { Requests } from '../requests/requests.js'
import { HandBack } from '../shutdown/hand-back.js'
import { delayedHolder, holderList, type LoopHolders, type QueueHold, queueHolder } from '../shutdown/holders.js'
import { Stopper } from '../shutdown/stopper.js'
import { journalTransitions, newJournal, newJournaledKeys, newLedger, recover } from './durability.js'
import { type GateParts, newFlowControl, newGate, newKeyGroups } from './flow-control.js'
import { snapshotMetrics } from './gauges.js'
import { newKeyedJobs, newSchedules } from './jobs.js'
import { LoopBacks } from './loop-backs.js'
import { newAutoscaler, newPool, resizeByHand } from './scaling.js'
import { newDelayed, newWatchdog, newWheel } from './timers.js'
import { newStallDetector, newTimeoutBreakers } from './watchers.js'

// The loop's run queue over the ready queue its `queue` option names (`levels`, the default, or `heap`),
// with its key groups.
function newRunQueue(o: ResolvedLoopOptions, urgency: Urgency, extras: PostExtras, starts: StartFilters): RunQueue {
  const ready = o.queue === 'heap' ? new HeapReadyQueue(urgency) : new LevelQueue(urgency)
  return new RunQueue(ready, urgency, { groups: newKeyGroups(o.groups, extras, urgency), starts })
}

/** What every stage is built from: the resolved options and the front's emitter. */
class Roots<M extends MessageMap> {
  /**
   * @param options - the loop's options, resolved
   * @param events - the front's emitter
   */
  constructor(
    readonly options: ResolvedLoopOptions,
    readonly events: LoopEmitter<M>,
  ) {}
}

/**
 * One loop's stages, each a field built from the ones above it — the declaration order is the build
 * order (TypeScript refuses an initializer that reads a later field; test/engine-build-order.test.ts
 * checks the `#newX()` builders it calls too). The public `Loop` is a front.
 */
export class Engine<M extends MessageMap> extends Roots<M> {
  readonly clock = this.options.clock
  // The clock of the timers a stopped loop may still hold (the wheel's, the stall check): released at stop.
  readonly lingering = new ReleasableClock(this.clock)
  readonly metrics = new LoopMetrics()
  readonly registry = new Registry<M>(this.options.timeoutMs)
  readonly #urgency = new Urgency(this.options.agingMs)
  readonly lifecycle = new Lifecycle(this.options.autoStart, (next, was) => this.events.emit('state', next, was))
  // The per-post side tables (extras, traces, the idempotency ledger, made when first needed).
  readonly extras = new PostExtras()
  readonly #starts = new StartFilters()
  readonly queue = newRunQueue(this.options, this.#urgency, this.extras, this.#starts)
  readonly traces = new Traces(this.options.traces === 'all', this.options.keepTraces)
  readonly ledger = new LedgerSlot(() => this.#newLedger(), false) // made in the constructor with `idempotency`
  readonly records: RecordParts = { extras: this.extras, traces: this.traces, ledger: this.ledger }
  readonly #sides = { records: this.records, registry: this.registry }
  // The journal store's stage, and the ledger's durable keys (a loop created with `store`).
  readonly #durable = { ...this.#sides, options: this.options, clock: this.clock, events: this.events }
  readonly journal = newJournal(this.#durable)
  readonly keys = newJournaledKeys(this.#durable, this.journal)
  // The edges against the build order, bound once every stage exists.
  readonly #backs = new LoopBacks<M>(this.clock, this.options.capacity)
  /** Schedules the pool's next pass (one per synchronous burst of posts). */
  readonly schedulePump = this.#backs.schedulePump
  readonly wheel = newWheel(this.options, this.lingering, this.#backs.due)
  readonly handBack = new HandBack(this.clock, this.#backs.cutOff)
  readonly #deadLetters = new DeadLetterStore(this.options.deadLetters.maxSize, this.#backs.replay as never)
  readonly requests = new Requests(this.clock, this.#backs.cancel)
  readonly outcomes = this.#newOutcomes()
  // Flow control: rate limits, the dispatch gate.
  readonly #flow = this.#newLimits()
  readonly limits = this.#flow.limits
  readonly gate = newGate(this.#gated())
  readonly delayed = newDelayed(this.wheel, this.#backs.enterDue, this.outcomes, this.#backs)
  readonly breakers = newTimeoutBreakers({ options: this.options, clock: this.clock, events: this.events })
  readonly pressure = this.#newPressure()
  readonly admission = this.#newAdmission()
  readonly pacing = this.#newPacing()
  readonly failures = this.#newFailures()
  // Posts with a job key: found, cancelled and replaced by it until they start.
  readonly #jobRoots = { clock: this.clock, extras: this.extras, admission: this.admission, cancel: this.#backs.cancel }
  readonly jobs = newKeyedJobs<M>(this.#jobRoots, { delayed: this.delayed, retries: this.failures.retries })
  // Recurring schedules, each held by the message of its next fire.
  readonly schedules = newSchedules(this.#jobRoots, this) // its registry, journal, lingering clock, events, lifecycle
  // Every way in (post, send, request, delays, follow-ups, replays, restores): the one writer of `posted`.
  readonly entries = this.#newEntries()
  readonly watchdog = newWatchdog(this.clock, this.wheel, this.options.graceMs, this.#backs.timedOut)
  readonly stall = this.#newStall()
  readonly attempts = this.#newAttempts()
  readonly pool = newPool({ options: this.options, attempts: this.attempts, lingering: this.lingering })
  // The worker autoscaler (`workers: { min, max }`); off for a fixed count and after a manual resize.
  readonly autoscaler = this.#newAutoscaler()
  // Every stage holding accepted messages outside the pool: for a stop, a cancel, a search.
  readonly #holders = this.#newHolders()
  readonly holders = holderList(this.#holders)
  readonly cancels = this.#newCancels()
  readonly stopper = this.#newStopper()

  /**
   * @param options - the user's options (validated here)
   * @param events - the front's emitter
   * @throws InvalidArgumentError for a bad option
   */
  constructor(options: LoopOptions | undefined, events: LoopEmitter<M>) {
    super(resolveOptions(options), events)
    if (this.options.idempotency !== undefined) this.ledger.ensure() // now that the journal's keys exist
    journalTransitions(this.journal, [this.delayed, this.failures.retries], this.#deadLetters)
    this.stall?.start()
    const { stopper, entries, cancels, admission, pacing, pool, failures, queue, delayed, watchdog, limits } = this
    const { schedules } = this
    const targets = { stopper, entries, cancels, admission, pacing, pool, failures, queue, delayed, watchdog, limits }
    this.#backs.bind({ ...targets, schedules })
    if (this.lifecycle.state === 'running') this.stopper.armTimeLimit() // autoStart: running from now
  }

  /**
   * Before each start: recovers the journal, once, before the first start (see `recoverJournal`),
   * and arms the time limit.
   */
  recover(): void {
    const { journal, keys, ledger, lifecycle, clock, events } = this
    const parts = { journal, keys, ledger, lifecycle, clock, events, deadLetters: this.#deadLetters }
    recover(parts, (snapshot) => this.entries.restore(snapshot, 0, this.options.workers))
    this.schedules.reconcile()
    this.stopper.armTimeLimit()
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

  /** `loop.resize()`: a manual count turns the autoscaler off for good; a change emits `workers`. */
  resize(workers: number): void {
    const { autoscaler, pool, queue, clock, events } = this
    resizeByHand({ autoscaler, pool, queue, clock, events }, workers)
  }

  #newLedger(): Idempotency {
    const { options, clock, events, extras, keys } = this
    return newLedger({ options, clock, events, extras, keys })
  }

  // Every outcome, and what each tells: the per-message log, the requests waiting.
  #newOutcomes(): Outcomes<M> {
    const { clock, events, metrics, records, queue, handBack, requests, journal, options } = this
    const messageLog = options.messageLog === false ? undefined : options.messageLog
    const sinks = { deadLetters: this.#deadLetters, handBack, requests, journal, messageLog }
    return new Outcomes<M>({ clock, events, metrics, records, queue, sinks, backs: this.#backs })
  }

  // Rate limits and key groups, hooked into the run queue.
  #newLimits(): { readonly limits: RateLimits; readonly hold: QueueHold } {
    const { options, clock, events, metrics, registry, records, queue } = this
    const holds = { queue, starts: this.#starts, wheel: this.wheel, pump: this.schedulePump }
    return newFlowControl({ options, clock, events, metrics, registry, records, holds }, this.#urgency)
  }

  // What the gate and the stall detector read.
  #gated(): GateParts<M> {
    const { options, events, queue, limits, lingering, schedulePump } = this
    return { options, events, queue, limits, lingering, schedulePump }
  }

  #newPressure(): LoopPressure | undefined {
    const { backpressure: bp, capacity } = this.options
    return bp === false ? undefined : new LoopPressure(bp, capacity, this.clock, this.#backs.onPressure)
  }

  // The way in: validate, stamp, claim the key, place or refuse.
  #newAdmission(): Admission<M> {
    const { options, registry, clock, events, metrics, records, lifecycle, breakers, pressure, journal } = this
    const { queue, delayed, outcomes, requests } = this
    const backs = this.#backs
    const gates = { lifecycle, breakers, pressure, journal, load: backs.load }
    const places = { queue, delayed, outcomes, requests, cancel: backs.cancel, schedulePump: backs.schedulePump }
    return new Admission<M>({ policy: { options, registry }, clock, events, metrics, records, gates, places })
  }

  // Producers waiting for room (`send`, `ready`), overdue delayed messages, pressure transitions.
  #newPacing(): Pacing<M> {
    const { options, clock, events, lifecycle, registry, admission, queue, pressure, delayed } = this
    const room = { queue, pressure, delayed }
    return new Pacing<M>({ options, clock, events, lifecycle, registry, admission, room })
  }

  // Retries, dead letters, breakers, alerts, the failure exit.
  #newFailures(): Failures<M> {
    const { options, registry, clock, events, metrics, records, queue, limits, outcomes, lifecycle } = this
    const wheel = this.wheel as DeadlineScheduler<Envelope>
    const holds = { wheel, queue, starts: this.#starts, pump: this.schedulePump, limits }
    const exits = { outcomes, deadLetters: this.#deadLetters, lifecycle, failureExit: this.#backs.failureExit }
    const policy = { options, registry }
    return new Failures<M>({ policy, clock, events, metrics, records, holds, exits }, this.#urgency.compare)
  }

  // The ways in, with what a restore touches.
  #newEntries(): Entries<M> {
    const { options: o, clock, events, metrics, records, registry, admission, pacing, requests } = this
    const { queue, delayed, journal } = this
    const places = { queue, delayed, retries: this.failures.retries, admission, journal, cancel: this.#backs.cancel }
    const restore = { policy: { options: o, registry }, clock, events, metrics, records, places }
    const limits = { maxHops: o.maxHops, idPrefix: o.idPrefix }
    const ways = { pacing, requests, jobs: this.jobs }
    return new Entries<M>({ clock, metrics, limits, admission, ways, restore })
  }

  #newStall(): StallDetector | undefined {
    const { options, clock, events, queue, gate } = this
    return newStallDetector({ options, clock, events, queue, gate, running: this.#backs.running })
  }

  // One attempt of one message: take, begin (its deadline), invoke, end.
  #newAttempts(): Attempts<M> {
    const { options, clock, events, registry, metrics, records, lifecycle, gate, queue, pacing, limits } = this
    const { watchdog, outcomes, failures, breakers, stall, journal, entries } = this
    const starts = { lifecycle, gate, queue, pacing, limits, timeoutMs: options.timeoutMs }
    const ends = { watchdog, outcomes, failures, breakers, stall, journal, entries }
    return new Attempts<M>({ clock, events, registry, metrics, records, starts, ends })
  }

  #newAutoscaler(): Autoscaler | undefined {
    const { options, lingering, queue, pool, metrics, lifecycle, events } = this
    return newAutoscaler({ options, lingering, queue, pool, metrics, lifecycle, events })
  }

  #newHolders(): LoopHolders {
    const { retries, breakerHold: breakers } = this.failures
    const [limits, delayed, queue] = [this.#flow.hold, delayedHolder(this.delayed), queueHolder(this.queue)]
    return { retries, breakers, limits, delayed, queue }
  }

  // Per-message cancel, wherever the message waits.
  #newCancels(): Cancels<M> {
    const { queue, outcomes, pacing, admission, entries } = this
    const roomFreed = () => {
      pacing.roomFreed()
      admission.queueChanged()
    }
    const seqOf = (id: unknown) => entries.seqOf(id)
    return new Cancels<M>({ holders: this.#holders, queue, outcomes, running: this.#backs.running, roomFreed, seqOf })
  }

  /**
   * A stopping loop refuses `action`; with `asPost`, so does a journal that cannot take posts now
   * (before start(), or while the store fails).
   */
  refuseIfStopping(action: string, asPost = false): void {
    const state = this.lifecycle.state
    if (state === 'draining' || state === 'stopped') throw new LoopStoppedError(action, state)
    const refusal = asPost ? this.journal?.refusal : undefined
    if (refusal !== undefined) throw refusal
  }

  // The three exits: a draining stop, a stop without drain, a stop that hands back at its deadline.
  #newStopper(): Stopper<M> {
    const { options, clock, events, lifecycle, stall, gate, pacing, failures, lingering, journal } = this
    const { delayed, holders, pool, outcomes, handBack, schedulePump } = this
    const quiets = { stall, gate, pacing, failures, lingering, journal }
    const carries = (m: Envelope) => this.extras.scheduleOf(m) !== undefined
    const work = { delayed, holders, pool, outcomes, handBack, schedulePump, carries }
    return new Stopper<M>({ options, clock, events, lifecycle, quiets, work })
  }
}
