/**
 * The message loop: producers → bounded priority queue → dispatcher → partitioned worker pool.
 *
 * @module
 */

import type { PressureTransition } from '@flowing/backpressure'
import { WheelDriver } from '@flowing/timing-wheel'
import {
  type Attempt,
  type DeadlineScheduler,
  FencedError,
  HandlerTimeoutError,
  StallDetector,
  Watchdog,
} from '@flowing/watchdog'
import type { Clock, TimerHandle } from '../clock.js'
import type { Handler, Middleware, RegisterOptions } from '../dispatcher/handler.js'
import { Registry } from '../dispatcher/registry.js'
import type { Router } from '../dispatcher/router.js'
import {
  CircuitOpenError,
  DelayedFullError,
  DuplicateMessageError,
  HopLimitError,
  InvalidArgumentError,
  LoopAbortedError,
  LoopStoppedError,
  LoopStoppingError,
  QueueFullError,
  type QueueLoad,
  SendAbortedError,
} from '../errors.js'
import type { CircuitState } from '../failure/circuits.js'
import type { DeadLetter, DeadLetterStore } from '../failure/dead-letters.js'
import { mergeRetry } from '../failure/retry-policy.js'
import type { MessageTrace } from '../failure/trace.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { ReleasableClock } from '../internal/releasable-clock.js'
import * as check from '../internal/validate.js'
import type { Message, MessageMap, MessageType, PostOptions, PostResult, SendOptions } from '../message.js'
import { LoopMetrics, type MetricsSnapshot } from '../metrics/loop-metrics.js'
import { WorkerPool } from '../pool/worker-pool.js'
import { HeapReadyQueue } from '../queue/heap-ready-queue.js'
import { LevelQueue } from '../queue/level-queue.js'
import { RunQueue } from '../queue/run-queue.js'
import { Urgency } from '../queue/urgency.js'
import type { LoopSnapshot } from '../shutdown/snapshot.js'
import { Admission, Mode } from './admission.js'
import { AttemptContext } from './attempt-context.js'
import { type DelayedHost, type DelayedMessage, DelayedPosts } from './delayed-posts.js'
import { LoopEmitter, type LoopState, type ZombieSummary } from './events.js'
import { type FailureExitReport, Failures } from './failures.js'
import { HandBack } from './hand-back.js'
import { DuplicateSkip, Idempotency } from './idempotency.js'
import { type LoopOptions, type ResolvedLoopOptions, resolveOptions } from './options.js'
import { PostExtras } from './post-extras.js'
import { checkPostOptions } from './post-options.js'
import { LoopPressure } from './pressure.js'
import { type RestoreHost, restoreSnapshot } from './restore.js'
import { SendGate } from './send-gate.js'
import { TimeoutBreakers } from './timeout-breakers.js'

const RESOLVED = Promise.resolve()

// The abort reason of attempts cut off by a stop's deadline: their messages are handed back.
const HANDED_BACK = new LoopAbortedError()

// Promise.withResolvers arrived in Node 22; this is the same for Node 20.
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** Options of {@link Loop.stop}. */
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
   * `signal`), delayed messages not yet due go to the snapshot at once instead of being cancelled.
   * @defaultValue Infinity (no deadline)
   */
  readonly deadlineMs?: number
  /** Cuts the drain short when aborted, as the deadline does (e.g. a second SIGTERM). */
  readonly signal?: AbortSignal
}

/**
 * An in-process message loop. Create one with {@link createLoop}.
 *
 * @typeParam M - the message map: type → payload
 *
 * @remarks
 * Guarantees (BRIEF §3), each enforced in one place:
 * - **I1** every admitted message ends in exactly one outcome — `succeeded`, `dead-lettered`,
 *   `dropped`, `cancelled`, or handed back in a shutdown snapshot (`snapshotted`) — counted in
 *   {@link Loop.metrics}; a refused post throws (or returns) at once.
 * - **I2** two messages with the same `key` never run at once; equal-priority messages of a key start
 *   in post order (`RunQueue`), also across retries and breaker holds (the key stays claimed).
 * - **I3** a free worker takes the most urgent runnable message; ties go to post order; linear aging
 *   bounds overtaking (`Urgency`).
 * - **I4** never more than `capacity` messages wait.
 * - **I7** bad input throws a typed error before anything changes.
 *
 * Complexity per message: O(1) admission and dispatch with the default `levels` queue (O(log k) more
 * when a key is busy, k = messages parked on it).
 */
export class Loop<M extends MessageMap = MessageMap> {
  /** Typed lifecycle and message events (eventemitter3). */
  readonly events = new LoopEmitter<M>()
  readonly #options: ResolvedLoopOptions
  readonly #clock: Clock
  // The clock of the timers a stopped loop may still hold (the wheel's, the stall check): released at stop.
  readonly #lingering: ReleasableClock
  // The reading end() took, reusable by the next begin() of the same pump stretch when only loop code
  // ran in between (no listener, no selector): it saves one of three ~40 ns clock reads per message,
  // and can lag real time only by loop code, never by user code.
  #lastReading = 0
  #lastReadingValid = false
  readonly #registry = new Registry<M>()
  readonly #queue: RunQueue
  readonly #pool: WorkerPool<AttemptContext<M>>
  readonly #gate: SendGate<M>
  readonly #delayed: DelayedPosts
  readonly #wheel: WheelDriver<Envelope | Attempt>
  // Handler deadlines (the `timeoutMs` options), on the shared wheel.
  readonly #watchdog: Watchdog
  // Per-type escalation after repeated timeouts (`timeoutBreaker`).
  readonly #breakers: TimeoutBreakers | undefined
  // Reports a blocked event loop or no progress while work waits (`stall` option).
  readonly #stall: StallDetector | undefined
  // Per-post deadlines and retry policies, kept beside the envelope so messages without one pay nothing.
  readonly #extras = new PostExtras()
  // Retries, dead letters, alerts, circuit breakers, traces.
  readonly #failures: Failures<M>
  // The idempotency ledger, created with the option or by the first post that carries a key.
  #idem: Idempotency | undefined
  // A stop with a deadline or a signal: its cut-off and the snapshot it resolves with.
  readonly #handBack: HandBack

  // Watermark backpressure, when enabled.
  readonly #pressure: LoopPressure | undefined
  readonly #metrics = new LoopMetrics()
  #state: LoopState
  readonly #admission: Admission<M>
  // A pump is queued on the microtask queue; posts in one synchronous burst share it.
  #pumpScheduled = false
  readonly #pumpNow = (): void => {
    this.#pumpScheduled = false
    this.#pool.pump()
  }
  // Resolvers of drain(); settled on the next transition to idle.
  #idleWaiters: (() => void)[] = []
  #stopping: Promise<LoopSnapshot> | undefined
  // The shared promise behind `ready` while the loop is congested.
  #readyGate: { promise: Promise<void>; resolve: () => void } | undefined
  // The one timer that re-checks waiting producers when an open admission breaker cools down.
  #breakerWake: TimerHandle | undefined
  // A draining stop still admits follow-ups (ctx.post) of running handlers: they are part of the work
  // being drained, and refusing them would cut multi-step flows in half.
  #drainOnStop = false
  // Failed messages whose failure is being handled (the classifier runs): not idle meanwhile.
  #inTransit = 0
  // The stop's work is done and the loop is about to be `stopped`.
  #closing = false

  /**
   * @param options - see {@link LoopOptions}
   * @throws InvalidArgumentError for a bad option
   */
  constructor(options?: LoopOptions) {
    this.#options = resolveOptions(options)
    this.#clock = this.#options.clock
    this.#lingering = new ReleasableClock(this.#clock)
    const urgency = new Urgency(this.#options.agingMs)
    const ready = this.#options.queue === 'heap' ? new HeapReadyQueue(urgency) : new LevelQueue(urgency)
    this.#queue = new RunQueue(ready, urgency)
    this.#admission = new Admission<M>({
      options: this.#options,
      clock: this.#clock,
      registry: this.#registry,
      queue: this.#queue,
      metrics: this.#metrics,
      events: this.events,
      schedulePump: () => this.#schedulePump(),
      load: () => this.#load(),
      queueChanged: () => this.#pressure?.update(this.#queue.length),
      changed: (m, state) => {
        this.#failures.traces.note(m, state, m.postedAt)
        if (state === 'queued') return
        this.#idem?.ended(m, 'released')
        this.#extras.forget(m)
      },
    })
    const bp = this.#options.backpressure
    this.#pressure =
      bp === false ? undefined : new LoopPressure(bp, this.#options.capacity, this.#clock, (t) => this.#onPressure(t))
    this.#pool = new WorkerPool<AttemptContext<M>>(
      this,
      this.#lingering,
      this.#options.workers,
      this.#options.dispatchBudget,
      this.#options.dispatchBudgetMs,
      this.#options.maxZombies,
      // Saturation (every worker stuck while work waits) is always watched: the stall threshold.
      (typeof this.#options.stall === 'object' ? this.#options.stall.noProgressMs : undefined) ?? 30_000,
    )
    this.#gate = new SendGate<M>(
      this.#clock,
      (w) => this.#admit(w.type, w.payload, w.options, 0, undefined, Mode.Throw),
      (type, error) => this.#admission.refused(type, error),
    )
    // One timing wheel and one real timer for delayed messages and handler deadlines alike.
    this.#wheel = new WheelDriver<Envelope | Attempt>({
      timers: this.#lingering,
      budget: this.#options.dispatchBudget,
      // Delayed messages, retries (they keep places in the queue) and handler deadlines.
      maxPending: Math.min(16_000_000, this.#options.maxDelayed + this.#options.capacity + 2 * 65_536),
      onDue: (due) => {
        for (const item of due) {
          if (Watchdog.owns(item)) this.#watchdog.onDue(item)
          else if (item.where === Where.Backoff) this.#failures.retries.due(item)
          else if (item.where === Where.Delayed) this.#delayed.due(item)
          // else: cancelled or handed back by a listener of an earlier item of this batch
        }
      },
    })
    this.#delayed = new DelayedPosts(this.#wheel as DeadlineScheduler<Envelope>, this.#delayedHost, Where.Delayed)
    this.#failures = new Failures<M>(
      {
        options: this.#options,
        clock: this.#clock,
        queue: this.#queue,
        registry: this.#registry,
        metrics: this.#metrics,
        events: this.events,
        extras: this.#extras,
        wheel: this.#wheel as DeadlineScheduler<Envelope>,
        entered: () => {
          this.#pressure?.update(this.#queue.length)
          this.#schedulePump()
        },
        replay: (letter) => this.#replay(letter, Mode.Result) as unknown as PostResult<MessageMap, never>,
        keyOf: (m) => this.#idem?.keyOf(m),
        handBackIfCut: (m) => {
          if (!this.#handBack.cut) return false
          if (m.key !== undefined) this.#queue.release(m.key)
          this.#handBack.add(m, 'queued')
          return true
        },
        mayRetry: () =>
          this.#state !== 'stopped' && !this.#handBack.cut && (this.#stopping === undefined || this.#drainOnStop),
        deadLettered: (m) => {
          this.#idem?.ended(m, 'failed')
          this.#extras.forget(m)
        },
        failureExit: (report) => this.#failureExit(report),
      },
      urgency.compare,
    )
    this.#handBack = new HandBack({
      clock: this.#clock,
      cutOff: () => this.#cutOff(),
      extrasOf: (m) => ({
        attempts: [...(this.#failures.traces.of(m)?.attempts ?? [])],
        idempotencyKey: this.#idem?.keyOf(m),
        checkpoint: this.#extras.checkpointOf(m),
        retry: this.#extras.retryOf(m),
        handlerTimeoutMs: this.#extras.timeoutOf(m),
      }),
      handedBack: (m, state) => {
        this.#idem?.handedBack(m)
        this.#extras.forget(m)
        this.#metrics.snapshotted++
        this.#failures.traces.note(m, 'snapshotted', this.#clock.now(), undefined, state)
      },
    })
    this.#watchdog = new Watchdog({
      timers: this.#clock,
      scheduler: this.#wheel as DeadlineScheduler<Attempt>,
      graceMs: this.#options.graceMs,
      onTimeout: (attempt, error) => {
        this.#pool.detach((ctx) => ctx.guard === attempt, error, true)
      },
    })
    const tb = this.#options.timeoutBreaker
    this.#breakers =
      tb === false
        ? undefined
        : new TimeoutBreakers(tb.threshold ?? 5, tb.cooldownMs ?? 30_000, this.#clock, (change) =>
            this.events.emit('breaker', change),
          )
    const stall = this.#options.stall
    this.#stall =
      stall === false
        ? undefined
        : new StallDetector({
            ...(stall === true ? {} : stall),
            timers: this.#clock,
            onStall: (report) => this.events.emit('stall', report),
            busy: () => this.#queue.length > 0,
            describeRunning: () => this.#pool.attempts().map((ctx) => ctx.describe(this.#clock.now())),
          })
    this.#stall?.start()
    this.#state = this.#options.autoStart ? 'running' : 'created'
    if (this.#options.idempotency !== undefined) this.#idem = this.#newLedger()
  }

  // ── registration ──────────────────────────────────────────────────────────────────────────────

  /**
   * Registers the handler of a message type.
   * @throws DuplicateHandlerError if the type has one (unless `replace`); InvalidArgumentError
   */
  on<T extends MessageType<M>>(type: T, handler: Handler<M, T>, options?: RegisterOptions): this {
    this.#checkRegistration(options)
    this.#registry.on(type, handler, options)
    if (options?.breaker !== undefined) this.#failures.enableBreakers()
    return this
  }

  /**
   * Registers a router: the handler is chosen by a route key computed from each message at post time.
   * A route key with no handler and no `otherwise()` is refused at post with `UnknownRouteError`.
   */
  route<T extends MessageType<M>, R extends string>(
    type: T,
    selector: (message: Message<M, T>) => R,
    options?: RegisterOptions,
  ): Router<M, T, R> {
    this.#checkRegistration(options)
    const router = this.#registry.route(type, selector, options)
    if (options?.breaker !== undefined) this.#failures.enableBreakers()
    return router
  }

  /** Appends a middleware around every handler call (outermost first). */
  use(middleware: Middleware<M>): this {
    this.#registry.use(middleware)
    return this
  }

  // ── producers ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Admits a message, or throws why not.
   *
   * @returns the admitted message (under `drop-new` it may already be dropped: see `tryPost`)
   * @throws QueueFullError when full under `reject`/`wait`; LoopStoppedError after `stop()`;
   * UnknownMessageTypeError, UnknownRouteError, InvalidArgumentError for bad input
   */
  post<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): Message<M, T> {
    this.#metrics.posted++
    this.#admission.checkOptions(type, options, false)
    return this.#admit(type, payload, options, 0, undefined, Mode.Throw) as Message<M, T>
  }

  /**
   * Like {@link Loop.post}, but overload and lifecycle refusals come back as a result instead of an
   * exception. Bad input (unknown type, bad options) still throws: it is a bug, not a condition.
   */
  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T> {
    this.#metrics.posted++
    this.#admission.checkOptions(type, options, false)
    return this.#admit(type, payload, options, 0, undefined, Mode.Result) as PostResult<M, T>
  }

  /**
   * Admits a message, waiting for space if the queue is full and the policy is `wait`: producers are
   * served by priority then arrival, exactly one per freed slot.
   *
   * @throws (rejects) SendTimeoutError, SendAbortedError, LoopStoppedError, and what `post` throws
   */
  send<T extends MessageType<M>>(type: T, payload: M[T], options?: SendOptions): Promise<Message<M, T>> {
    this.#metrics.posted++
    let wait: boolean
    try {
      checkPostOptions(options, true)
      // An already-aborted signal means "do not send", whether or not there is room (AbortSignal convention).
      if (options?.signal?.aborted) throw new SendAbortedError(type, options.signal.reason)
      if (this.#gate.length >= this.#options.maxWaiting) throw new QueueFullError(type, this.#load())
      wait =
        (options?.overflow ?? this.#options.overflow) === 'wait' &&
        (this.#queue.length >= this.#options.capacity ||
          !(this.#pressure?.admits(options?.priority ?? this.#options.defaultPriority, this.#queue.length) ?? true)) &&
        this.#state !== 'draining' &&
        this.#state !== 'stopped'
      if (wait) {
        this.#registry.resolve(type) // refuse unknown types now, not after the wait
        const waiting = this.#gate.wait(
          type,
          payload,
          options,
          options?.priority ?? this.#options.defaultPriority,
          this.#load(),
        ) as Promise<Message<M, T>>
        this.#armBreakerWake()
        return waiting
      }
    } catch (error) {
      this.#admission.refused(type, error as Error)
      return Promise.reject(error)
    }
    try {
      return Promise.resolve(this.#admit(type, payload, options, 0, undefined, Mode.Throw) as Message<M, T>)
    } catch (error) {
      return Promise.reject(error) // #admit counted the refusal
    }
  }

  /**
   * Schedules a message to enter the queue after `delayMs` (on the loop's timing wheel: O(1), one real
   * timer for all of them). It never starts before it is due; when due it enters under the overflow
   * policy in force then — under `reject` / `wait` a due message that finds the queue full waits
   * outside it and enters first when a slot frees (it was accepted: it may not vanish).
   *
   * @param delayMs - from now, 0 to `Number.MAX_SAFE_INTEGER` ms
   * @returns a handle: `dueAt`, `pending`, `cancel()` (outcome `cancelled`)
   * @throws InvalidArgumentError for a bad delay, DelayedFullError past `maxDelayed`, and what `post` throws
   *
   * @example
   * ```ts
   * const timeout = loop.postDelayed('order.timeout', { orderId }, 15 * 60_000, { key: orderId })
   * // … payment arrived in time:
   * timeout.cancel()
   * ```
   */
  postDelayed<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    delayMs: number,
    options?: PostOptions,
  ): DelayedMessage<M, T> {
    this.#metrics.posted++
    if (typeof delayMs !== 'number' || !(delayMs >= 0 && delayMs <= Number.MAX_SAFE_INTEGER)) {
      this.#admission.refuseInput(
        type,
        new InvalidArgumentError('delayMs', 'a number from 0 to Number.MAX_SAFE_INTEGER', delayMs),
      )
    }
    return this.#schedule(type, payload, this.#clock.now() + delayMs, options)
  }

  /**
   * Like {@link Loop.postDelayed}, at an absolute clock time (`loop`'s clock, ms). A time in the past is
   * due at once.
   *
   * @throws InvalidArgumentError for a non-finite `at`, and what `postDelayed` throws
   */
  postAt<T extends MessageType<M>>(type: T, payload: M[T], at: number, options?: PostOptions): DelayedMessage<M, T> {
    this.#metrics.posted++
    if (typeof at !== 'number' || !Number.isFinite(at)) {
      this.#admission.refuseInput(type, new InvalidArgumentError('at', 'a finite clock time in ms', at))
    }
    return this.#schedule(type, payload, at, options)
  }

  /**
   * How many more messages the loop wants before it pushes back, as in the WHATWG streams API:
   * `capacity − queued` (with backpressure: up to the shed mark). Zero or less: wait for
   * {@link Loop.ready}.
   */
  get desiredSize(): number {
    const pressure = this.#pressure
    if (pressure === undefined) return this.#options.capacity - this.#queue.length
    return pressure.desiredSize(this.#queue.length, this.#options.defaultPriority)
  }

  /**
   * Resolves when {@link Loop.desiredSize} is positive — at once if it is. Every producer pacing
   * itself shares one promise per congested period (no listener per producer). Also resolves when the
   * loop stops (a post then throws `LoopStoppedError`).
   *
   * @example
   * ```ts
   * for (const row of rows) {
   *   await loop.ready
   *   loop.post('row.import', row)
   * }
   * ```
   */
  get ready(): Promise<void> {
    if (this.desiredSize > 0 || this.#stopping !== undefined) return RESOLVED
    this.#readyGate ??= deferred()
    this.#armBreakerWake()
    return this.#readyGate.promise
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────────

  /** The lifecycle state. */
  get state(): LoopState {
    return this.#state
  }

  /** Starts dispatching (`created` or `paused` → `running`). */
  start(): this {
    if (this.#state === 'draining' || this.#state === 'stopped') throw new LoopStoppedError('start', this.#state)
    this.#setState('running')
    this.#schedulePump()
    return this
  }

  /** Stops starting new handlers; running ones finish, posts are still admitted. */
  pause(): this {
    if (this.#state === 'draining' || this.#state === 'stopped') throw new LoopStoppedError('pause', this.#state)
    this.#setState('paused')
    return this
  }

  /** Same as {@link Loop.start}, for a paused loop. */
  resume(): this {
    return this.start()
  }

  /** Resolves when nothing is queued and nothing runs (a paused loop resolves only once resumed). */
  drain(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /**
   * Refuses new posts at once (`LoopStoppedError`, also for producers waiting in `send()`), then
   * drains or cancels what is queued, and resolves once nothing runs. Idempotent.
   *
   * @remarks While a draining stop runs, follow-ups that running handlers post through `ctx.post` are
   * still admitted (they belong to the work being drained); with `drain: false` they are refused too.
   * Calling `stop({ drain: false })` while a draining stop is in progress escalates it: what is still
   * queued is cancelled and running handlers are aborted; both calls return the same promise.
   */
  stop(options?: StopOptions): Promise<LoopSnapshot> {
    const drain = options?.drain === undefined ? true : check.boolean('options.drain', options.drain)
    const deadlineMs =
      options?.deadlineMs === undefined
        ? undefined
        : check.nonNegativeNumber('options.deadlineMs', options.deadlineMs, true)
    const signal = options?.signal
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new InvalidArgumentError('options.signal', 'an AbortSignal', signal)
    }
    if (this.#stopping !== undefined) {
      if (this.#state === 'stopped' || this.#closing) return this.#stopping
      if (!drain && this.#drainOnStop) this.#escalate() // a graceful stop that ran out of patience
      this.#handBack.arm(deadlineMs, signal) // a shorter deadline, or a signal, may come later
      return this.#stopping
    }
    this.#drainOnStop = drain
    this.#handBack.active = deadlineMs !== undefined || signal !== undefined
    this.#stall?.stop()
    this.#setState('draining')
    this.#openReadyGate()
    if (this.#breakerWake !== undefined) this.#clock.clearTimeout(this.#breakerWake)
    this.#breakerWake = undefined
    this.#gate.rejectAll((w) => new LoopStoppingError(`send \`${w.type}\``))
    if (this.#handBack.active) for (const e of this.#delayed.takeAll(false)) this.#handBack.add(e.m, 'delayed', e.dueAt)
    else this.#cancelDelayed(!drain)
    if (!drain) this.#cancelQueued()
    this.#schedulePump()
    this.#stopping = this.drain().then(() => {
      this.#closing = true // listeners of `drained` and late alerts may call stop(): nothing to arm
      this.#handBack.disarm()
      if (this.#drainOnStop) this.events.emit('drained')
      this.#failures.flush() // pending alerts go out; breaker cooldown timers stop
      this.#setState('stopped')
      this.#lingering.release() // a zombie's grace timer, a compensation deadline: none keeps the process alive
      return this.#handBack.take()
    })
    this.#handBack.arm(deadlineMs, signal)
    return this.#stopping
  }

  /**
   * Re-admits every message of a shutdown snapshot (from this process or another): queued, held and
   * interrupted ones enter the queue; delayed ones and retries wait what they still had to wait, less
   * the time since the snapshot was taken; attempt counts, checkpoints (`ctx.committed`), per-post
   * policies and idempotency keys continue where they were. All or nothing: a malformed, truncated,
   * foreign or wrong-version snapshot — or one this loop cannot take (an unknown type, not enough
   * room, a key already in flight here) — throws `SnapshotError` and changes nothing.
   *
   * @returns how many messages were re-admitted
   * @throws SnapshotError; LoopStoppedError after `stop()`
   */
  restore(snapshot: LoopSnapshot): number {
    if (this.#state === 'draining' || this.#state === 'stopped') {
      throw new LoopStoppedError('restore a snapshot', this.#state)
    }
    return restoreSnapshot(this.#restoreHost, snapshot)
  }

  /**
   * Changes the worker count at run time. Growing starts waiting work at once; shrinking lets running
   * handlers finish. Per-key order is unaffected: it never depended on which worker runs a key.
   */
  resize(workers: number): this {
    this.#pool.resize(check.positiveInteger('workers', workers, 65_536))
    return this
  }

  // ── observability ─────────────────────────────────────────────────────────────────────────────

  /** Counters, gauges and histograms (a fresh plain-data snapshot). */
  metrics(): MetricsSnapshot {
    const load = this.#load()
    this.#metrics.lateCompletions = this.#watchdog.lateCompletions
    this.#metrics.fenced = this.#watchdog.stats().fencedEffects
    return this.#metrics.snapshot(
      {
        ...load,
        parked: this.#queue.parked,
        workers: this.#pool.size,
        busyKeys: this.#queue.busyKeys,
        pressure: this.#pressure?.level ?? 'normal',
        zombies: this.#watchdog.zombieCount,
        delayed: this.#delayed.scheduled,
        overdue: this.#delayed.overdue,
        retrying: this.#failures.retries.length,
        held: this.#queue.held,
        deadLetters: this.#failures.deadLetters.size,
        fill: load.queued / load.capacity,
      },
      this.#pressure?.stats(),
    )
  }

  /**
   * The lifecycle trace of a message — its states with times, its attempts with errors and durations —
   * while it is known: live messages that were traced (by default those that failed, were held or
   * retried; every message with `traces: 'all'`), and the most recent `keepTraces` finished ones.
   *
   * @param id - a message id from this loop
   * @returns a plain copy, or `undefined` when the message is not (or no longer) traced
   */
  trace(id: string): MessageTrace | undefined {
    const prefix = `${this.#options.idPrefix}:`
    if (typeof id !== 'string' || !id.startsWith(prefix)) return undefined
    const seq = Number.parseInt(id.slice(prefix.length), 36)
    return Number.isSafeInteger(seq) ? this.#failures.traces.find(seq) : undefined
  }

  /** The in-memory dead-letter store: `list`, `replay` (a fresh attempt budget), `purge`. */
  get deadLetters(): DeadLetterStore {
    return this.#failures.deadLetters
  }

  /**
   * Re-posts a dead letter — from `loop.deadLetters` or from your own sink — as a new message with a
   * fresh attempt budget (its type, payload, key and priority).
   *
   * @throws what `post` throws
   */
  replay(letter: DeadLetter): Message<M> {
    return this.#replay(letter, Mode.Throw) as Message<M>
  }

  // Re-posts a letter: its type, payload, key, priority and idempotency key; its checkpoint carried over.
  #replay(letter: DeadLetter, mode: Mode): Message<M> | PostResult<M, MessageType<M>> {
    this.#metrics.posted++
    const options: PostOptions = { key: letter.key, priority: letter.priority, idempotencyKey: letter.idempotencyKey }
    this.#admission.checkOptions(letter.type, options, false)
    const result = this.#admit(letter.type, letter.payload, options, 0, undefined, mode)
    const m = (mode === Mode.Throw ? result : (result as { message?: Message<M> }).message) as unknown as
      | Envelope
      | undefined
    if (m !== undefined && m.where !== Where.Done && letter.checkpoint !== undefined) {
      this.#extras.commit(m, letter.checkpoint)
    }
    return result
  }

  /** Circuit breakers that are not closed: route, state, messages held. */
  circuits(): { route: string; state: CircuitState; held: number }[] {
    return this.#failures.circuits.states()
  }

  /** Timed-out handlers still unsettled after `graceMs`: what ran, for how long. */
  zombies(): ZombieSummary[] {
    return this.#watchdog.zombies().map(({ epoch, label, ageMs }) => ({ epoch, label, ageMs }))
  }

  /** Messages waiting (ready + parked). */
  get queued(): number {
    return this.#queue.length
  }

  /** Handlers running now. */
  get running(): number {
    return this.#pool.running
  }

  /** @internal Per-message side-table entries alive (tests check each outcome frees them). */
  get sideTableSize(): number {
    return this.#extras.size
  }

  // ── PoolHost (called by the worker pool) ──────────────────────────────────────────────────────

  /** @internal */
  canDispatch(): boolean {
    return this.#state === 'running' || this.#state === 'draining'
  }

  /** @internal */
  take(): Envelope | undefined {
    const m = this.#queue.take()
    if (m !== undefined) this.#pressure?.update(this.#queue.length)
    if (m !== undefined && this.#readyGate !== undefined && this.desiredSize > 0) this.#openReadyGate()
    if (m !== undefined && this.#delayed.overdue > 0) {
      this.#lastReadingValid = false // entering messages emit `posted`
      this.#delayed.admitOverdue(this.#hasRoom, (due) => this.#admission.enqueue(due))
    }
    if (m !== undefined && this.#gate.length > 0) {
      this.#lastReadingValid = false // admission may run route selectors and listeners
      this.#gate.admitWhile(this.#canAdmitWaiter)
    }
    return m
  }

  /** @internal */
  pumped(): void {
    this.#lastReadingValid = false
  }

  /** @internal */
  begin(m: Envelope): AttemptContext<M> {
    const now = this.#lastReadingValid ? this.#lastReading : this.#clock.now()
    this.#lastReadingValid = false
    this.#metrics.recordWait(m.priority, now - m.postedAt)
    const attempt = this.#failures.attemptOf(m)
    this.#failures.started(m, attempt, now)
    const timeoutMs = this.#timeoutFor(m)
    if (timeoutMs === Number.POSITIVE_INFINITY) return new AttemptContext<M>(this, m, attempt, now)
    const heartbeatMs = this.#registry.heartbeatFor(m.type)
    const guard = this.#watchdog.guard(
      heartbeatMs === undefined ? { timeoutMs, label: m } : { timeoutMs, heartbeatMs, label: m },
    )
    return new AttemptContext<M>(this, m, attempt, now, guard)
  }

  /** @internal */
  started(m: Envelope): void {
    this.events.emit('started', m as unknown as Message<M>)
  }

  /** @internal */
  late(_m: Envelope, ctx: AttemptContext<M>, ok: boolean): void {
    // Swallowed and counted once by the watchdog (`lateCompletions`); the outcome was recorded at the timeout.
    if (ok) ctx.guard?.done()
    else ctx.guard?.fail()
  }

  /** @internal */
  waiting(): boolean {
    return this.#queue.length > 0
  }

  /** @internal */
  saturated(attempts: AttemptContext<M>[], sinceMs: number, thresholdMs: number): void {
    const at = this.#clock.now()
    const running = attempts.map((ctx) => ctx.describe(at))
    this.events.emit('stall', { kind: 'saturated', at, lagMs: 0, sinceProgressMs: sinceMs, thresholdMs, running })
  }

  /** @internal */
  zombiesOver(count: number, zombies: AttemptContext<M>[]): void {
    const now = this.#clock.now()
    this.events.emit(
      'zombies',
      count,
      zombies.map((ctx) => {
        const { epoch, label, ageMs } = ctx.describe(now)
        return { epoch, label, ageMs }
      }),
    )
  }

  /** @internal */
  invoke(m: Envelope, ctx: AttemptContext<M>): unknown {
    const claim = this.#idem?.awaitClaim(m) // an async idempotency store: claimed before the first attempt
    if (claim === undefined) return this.#registry.invoke(m, ctx)
    return Promise.resolve(claim).then((entry) => {
      if (entry !== undefined) throw new DuplicateSkip(entry)
      if (ctx.signal.aborted) throw ctx.signal.reason // timed out or handed back while it waited
      return this.#registry.invoke(m, ctx)
    })
  }

  /** @internal */
  commit(m: Envelope, checkpoint: unknown, attempt: number, startedAt: number): void {
    // Only the attempt running now may commit: not one that ended, failed or was superseded by a retry.
    if (m.where !== Where.Running || attempt !== this.#failures.attemptOf(m)) {
      throw new FencedError(`${m.type} ${m.id}`, attempt, 'not running', 'ctx.commit')
    }
    this.#extras.commit(m, checkpoint)
    const value = this.#extras.checkpointOf(m)
    this.#idem?.committed(m, value)
    const fresh = this.#failures.traces.of(m) === undefined
    const trace = this.#failures.traces.open(m)
    if (fresh) trace.note('running', startedAt, attempt)
    trace.note('committed', this.#clock.now(), attempt)
    this.events.emit('committed', m as unknown as Message<M>, value)
  }

  /** @internal */
  checkpointOf(m: Envelope): unknown {
    return this.#extras.checkpointOf(m)
  }

  /** @internal */
  end(m: Envelope, ctx: AttemptContext<M>, ok: boolean, value: unknown): void {
    if (!ok && (value === HANDED_BACK || value instanceof DuplicateSkip)) {
      this.#endUnrun(m, ctx, value === HANDED_BACK)
      return
    }
    const now = this.#clock.now()
    const duration = now - ctx.startedAt
    this.#metrics.recordHandler(duration)
    const guard = ctx.guard
    if (guard?.isCurrent && !(ok ? guard.done() : guard.fail())) {
      // Settled after its deadline, before the late timer: a timeout (the watchdog counted it late).
      ok = false
      value = guard.signal.reason
    }
    this.#stall?.progress()
    const timedOut = !ok && value instanceof HandlerTimeoutError
    // A compensation hook or a breaker listener is user code: the reading must not be reused after it.
    let heard = timedOut
    if (timedOut) {
      this.#metrics.timedOut++
      this.#compensate(m)
    }
    if ((ok || timedOut) && this.#breakers?.record(m.type, timedOut) === true) heard = true
    if (ok) {
      m.where = Where.Done
      if (m.key !== undefined) this.#queue.release(m.key)
      this.#metrics.succeeded++
      this.#idem?.ended(m, 'done')
      this.#extras.forget(m)
      if (this.#failures.succeeded(m, ctx.attempt, ctx.startedAt, now)) heard = true
      heard = this.events.emit('succeeded', m as unknown as Message<M>, duration) || heard
    } else {
      // Retry (an ordered one keeps the key) or dead-letter; runs user code (classifier, listeners),
      // during which this message counts as in transit: a stop() from there waits for it.
      this.#inTransit++
      try {
        this.#failures.failed(m, ctx.attempt, ctx.startedAt, value, now)
      } finally {
        this.#inTransit--
      }
      heard = true
    }
    if (this.#isIdle()) heard = this.#onIdle() || heard
    this.#lastReading = now
    this.#lastReadingValid = !heard
  }

  // An attempt that did not count: interrupted by the stop's deadline (handed back in the snapshot),
  // or skipped because an async idempotency store found its key taken (dropped as a duplicate).
  #endUnrun(m: Envelope, ctx: AttemptContext<M>, handedBack: boolean): void {
    if (ctx.guard?.isCurrent) ctx.guard.cancel(HANDED_BACK)
    m.where = Where.Done
    if (m.key !== undefined) this.#queue.release(m.key)
    if (handedBack) this.#handBack.add(m, 'running')
    else {
      this.#idem?.handedBack(m) // the key is someone else's: leave the ledger alone
      this.#failures.circuits.abandon(m) // a probe that never ran frees its probe slot
      this.#admission.drop(m, 'duplicate')
    }
    if (this.#isIdle()) this.#onIdle()
    this.#lastReadingValid = false
  }

  /** @internal */
  postFollowUp<T extends MessageType<M>>(
    parent: Envelope,
    type: T,
    payload: M[T],
    options: PostOptions | undefined,
    mode: 'throw' | 'result',
  ): Message<M, T> | PostResult<M, T> {
    this.#metrics.posted++
    const hops = parent.hops + 1
    if (hops > this.#options.maxHops) {
      const error = new HopLimitError(type, hops, this.#options.maxHops)
      this.#admission.refused(type, error)
      throw error
    }
    this.#admission.checkOptions(type, options, false)
    return this.#admit(type, payload, options, hops, parent.traceId, mode === 'throw' ? Mode.Throw : Mode.Result) as
      | Message<M, T>
      | PostResult<M, T>
  }

  // ── admission ─────────────────────────────────────────────────────────────────────────────────

  // Admits, drops or refuses a post; `posted` was already counted, the options already checked.
  #admit(
    type: string,
    payload: unknown,
    options: PostOptions | undefined,
    hops: number,
    trace: string | undefined,
    mode: Mode,
  ): Message<M> | PostResult<M, MessageType<M>> {
    if (
      this.#state === 'stopped' ||
      (this.#state === 'draining' && !(hops > 0 && this.#drainOnStop && !this.#handBack.cut))
    ) {
      const error =
        this.#state === 'stopped'
          ? new LoopStoppedError(`post \`${type}\``, 'stopped')
          : new LoopStoppingError(`post \`${type}\``)
      return this.#admission.refuse(type, error, mode)
    }
    const openFor = this.#breakers?.refuses(type)
    if (openFor !== undefined) this.#admission.refuseInput(type, new CircuitOpenError(type, openFor))
    const pressure = this.#pressure
    if (pressure !== undefined) {
      const priority = options?.priority ?? this.#options.defaultPriority
      const decision = pressure.decide(this.#queue.length, priority)
      if (!decision.admitted) {
        return this.#admission.refuse(type, pressure.refusal(type, priority, decision, this.#queue.length), mode)
      }
    }
    const m = this.#admission.stamp(type, payload, options, hops, trace)
    this.#extras.keep(m, options)
    const duplicate = this.#claimKey(m, options)
    if (duplicate !== undefined) {
      this.#extras.forget(m)
      return this.#refuseDuplicate(duplicate, mode)
    }
    const placed = this.#admission.place(m, options?.overflow ?? this.#options.overflow, true)
    if (placed === 'full') {
      this.#idem?.ended(m, 'released') // refused: its claim goes too
      this.#extras.forget(m)
    }
    return this.#admission.answer(m, placed, mode)
  }

  // Accepts a delayed message onto the wheel; `posted` was already counted.
  #schedule<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    dueAt: number,
    options: PostOptions | undefined,
  ): DelayedMessage<M, T> {
    this.#admission.checkOptions(type, options, false)
    if (this.#state === 'draining' || this.#state === 'stopped') {
      const action = `schedule \`${type}\``
      this.#admission.refuseInput(
        type,
        this.#state === 'stopped' ? new LoopStoppedError(action, 'stopped') : new LoopStoppingError(action),
      )
    }
    const openFor = this.#breakers?.refuses(type)
    if (openFor !== undefined) this.#admission.refuseInput(type, new CircuitOpenError(type, openFor))
    if (this.#delayed.length >= this.#options.maxDelayed) {
      this.#admission.refuseInput(type, new DelayedFullError(type, this.#delayed.length, this.#options.maxDelayed))
    }
    const m = this.#admission.stamp(type, payload, options, 0, undefined)
    this.#extras.keep(m, options)
    const duplicate = this.#claimKey(m, options)
    if (duplicate !== undefined) {
      this.#extras.forget(m)
      this.#refuseDuplicate(duplicate, Mode.Throw)
    }
    this.#metrics.accepted++
    const handle = this.#delayed.schedule<M, T>(m, dueAt)
    this.#failures.traces.note(m, 'delayed', this.#clock.now(), undefined, `due at ${dueAt}`)
    this.events.emit('scheduled', m as unknown as Message<M>, dueAt)
    return handle
  }

  // Claims the idempotency key of a message being admitted; returns the refusal of a duplicate.
  #claimKey(m: Envelope, options: PostOptions | undefined): DuplicateMessageError | undefined {
    if (this.#idem === undefined && options?.idempotencyKey === undefined) return undefined
    this.#idem ??= this.#newLedger()
    const key = this.#idem.keyOf(m)
    if (key === undefined) return undefined
    try {
      this.#idem.claim(m, key)
    } catch (error) {
      if (error instanceof DuplicateMessageError) return error
      this.#admission.refuseInput(m.type, error as Error) // a store that throws: refused, nothing admitted
    }
    return undefined
  }

  #refuseDuplicate(error: DuplicateMessageError, mode: Mode): PostResult<M, MessageType<M>> {
    this.#metrics.duplicates++
    this.events.emit('duplicate', error.messageType, error.idempotencyKey, error.ledgerState)
    return this.#admission.refuse(error.messageType, error, mode)
  }

  #newLedger(): Idempotency {
    return new Idempotency(this.#options.idempotency ?? {}, this.#clock, this.#extras, (error, key) =>
      this.events.emit('ledger-error', error, key),
    )
  }

  // The loop's side of the delayed store: a due message enters under the policy in force then.
  readonly #delayedHost: DelayedHost = {
    enterDue: (m) => {
      m.postedAt = this.#clock.now() // aging and queue wait start when it enters
      return this.#admission.place(m, this.#options.overflow, false) !== 'full'
    },
    cancelled: (m) => this.#admission.cancel(m),
  }

  // The deadline of a message: per post, else per type, else the loop's — bounded for a breaker probe.
  #timeoutFor(m: Envelope): number {
    const timeout = this.#extras.timeoutOf(m) ?? this.#registry.timeoutFor(m.type) ?? this.#options.timeoutMs
    const probe = this.#failures.probeTimeout(m)
    return probe === undefined ? timeout : Math.min(timeout, probe)
  }

  // A type's retry policy must make sense once layered over the loop's (capMs ≥ baseMs): checked
  // before anything is registered.
  #checkRegistration(options: RegisterOptions | undefined): void {
    const retry = options?.retry
    if (retry !== undefined && retry !== null && typeof retry === 'object') {
      mergeRetry('options.retry', retry, this.#options.retry)
    }
  }

  // Runs the type's compensation hook once after a timeout, under its own deadline.
  #compensate(m: Envelope): void {
    const hook = this.#registry.compensationFor(m.type)
    if (hook === undefined) return
    const message = m as unknown as Message<M>
    const report = (error: unknown) => this.events.emit('compensated', message, error)
    const guard = this.#watchdog.guard({ timeoutMs: this.#timeoutFor(m), label: m, onTimeout: (_a, e) => report(e) })
    let result: unknown
    try {
      result = hook(m as unknown as Message, {
        get signal() {
          return guard.signal
        },
      })
    } catch (error) {
      if (guard.fail()) report(error)
      return
    }
    Promise.resolve(result).then(
      () => guard.done() && report(undefined),
      (error: unknown) => guard.fail() && report(error),
    )
  }

  readonly #hasRoom = (): boolean => this.#queue.length < this.#options.capacity
  // A producer waiting in send() may enter: room, and backpressure would admit its priority.
  readonly #canAdmitWaiter = (priority: number): boolean =>
    this.#queue.length < this.#options.capacity && (this.#pressure?.admits(priority, this.#queue.length) ?? true)

  // One event per level crossing; falling back below the shed mark wakes paced producers.
  #onPressure(transition: PressureTransition): void {
    this.events.emit('backpressure', transition)
    this.#recheckWaiting()
  }

  // An open admission breaker reopens by time, not by queue activity: when producers wait on it (in
  // send() or on `ready`), one timer re-checks them when its cooldown ends. Once the cooldown is over
  // and it is still open, the fill holds it: the level leaving `reject` re-checks them (no timer, which
  // would spin at 0 ms until the queue drains).
  #armBreakerWake(): void {
    const left = this.#pressure?.breakerCooldownLeft
    if (left === undefined || left <= 0 || this.#breakerWake !== undefined) return
    if (this.#gate.length === 0 && this.#readyGate === undefined) return
    this.#breakerWake = this.#clock.setTimeout(() => {
      this.#breakerWake = undefined
      this.#recheckWaiting()
    }, left)
  }

  // Lets waiting producers in if they may enter now, and re-arms if the breaker still holds them.
  #recheckWaiting(): void {
    if (this.#gate.length > 0) this.#gate.admitWhile(this.#canAdmitWaiter)
    if (this.#readyGate !== undefined && this.desiredSize > 0) this.#openReadyGate()
    this.#armBreakerWake()
  }

  #openReadyGate(): void {
    const gate = this.#readyGate
    this.#readyGate = undefined
    gate?.resolve()
  }

  #load(): QueueLoad {
    return {
      queued: this.#queue.length,
      capacity: this.#options.capacity,
      running: this.#pool.running,
      waitingProducers: this.#gate.length,
    }
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────────

  #schedulePump(): void {
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    RESOLVED.then(this.#pumpNow) // a resolved-promise hop: ~3× cheaper than queueMicrotask in Node
  }

  #isIdle(): boolean {
    return (
      this.#inTransit === 0 &&
      this.#queue.length === 0 &&
      this.#pool.running === 0 &&
      this.#delayed.overdue === 0 &&
      this.#failures.retries.length === 0
    )
  }

  // Returns whether an `idle` listener ran.
  #onIdle(): boolean {
    const heard = this.events.emit('idle')
    const waiters = this.#idleWaiters
    if (waiters.length > 0) {
      this.#idleWaiters = []
      for (const resolve of waiters) resolve()
    }
    return heard
  }

  // The cut-off: everything unfinished is handed back — backing off, held, delayed, waiting — and what
  // still runs is aborted (its signal fires, its late effects are fenced, its late settle ignored).
  #cutOff(): void {
    for (const { m, dueAt } of this.#failures.retries.takeAll(true)) {
      this.#queue.forget(m)
      this.#queue.releasePlace()
      this.#handBack.add(m, 'retry-scheduled', dueAt)
    }
    for (const m of this.#failures.circuits.clear()) {
      this.#queue.forget(m)
      this.#handBack.add(m, 'held')
    }
    for (const { m, dueAt } of this.#delayed.takeAll(true)) this.#handBack.add(m, 'delayed', dueAt)
    for (const m of this.#queue.clear()) this.#handBack.add(m, 'queued')
    for (const ctx of this.#pool.attempts()) {
      ctx.abort(true)
      this.#pool.detach((a) => a === ctx, HANDED_BACK, false)
    }
    if (this.#isIdle()) this.#onIdle()
  }

  // What restore() touches.
  get #restoreHost(): RestoreHost<M> {
    return {
      options: this.#options,
      clock: this.#clock,
      registry: this.#registry,
      queue: this.#queue,
      delayed: this.#delayed,
      failures: this.#failures,
      admission: this.#admission,
      extras: this.#extras,
      metrics: this.#metrics,
      events: this.events,
      ledger: () => this.#idem,
      ensureLedger: () => {
        this.#idem ??= this.#newLedger()
        return this.#idem
      },
    }
  }

  #failureExit(report: FailureExitReport): void {
    const exit = this.#options.failureExit
    if (exit === false) return
    this.events.emit('failure-exit', report)
    // Called once the failing attempt's bookkeeping (retry or dead letter) is done, so its retry is
    // handed back too; at once, before the pump can start anything else.
    const stopping = this.stop({ deadlineMs: exit.deadlineMs ?? 0 })
    const deliver = exit.onSnapshot
    if (deliver === undefined) return
    stopping
      .then((snapshot) => deliver(snapshot, report))
      .then(undefined, (error: unknown) => {
        queueMicrotask(() => {
          throw error
        })
      })
  }

  #escalate(): void {
    this.#drainOnStop = false
    this.#cancelDelayed(true)
    this.#cancelQueued()
  }

  // Delayed messages not yet due never run once stop() began; overdue ones are part of a drain.
  #cancelDelayed(overdueToo: boolean): void {
    for (const m of this.#delayed.clear(overdueToo)) this.#admission.cancel(m)
  }

  #cancelQueued(): void {
    for (const m of this.#failures.cancelAll()) this.#admission.cancel(m)
    for (const m of this.#queue.clear()) this.#admission.cancel(m)
    for (const ctx of this.#pool.attempts()) ctx.abort()
    if (this.#isIdle()) this.#onIdle()
  }

  #setState(next: LoopState): void {
    const previous = this.#state
    if (previous === next) return
    this.#state = next
    this.events.emit('state', next, previous)
  }
}

/**
 * Creates a message loop.
 *
 * @typeParam M - your message map (type → payload); makes `post` and handlers type-checked
 * @throws InvalidArgumentError for a bad option
 *
 * @example
 * ```ts
 * interface Messages { 'order.paid': { orderId: string; amount: number } }
 * const loop = createLoop<Messages>({ capacity: 10_000, workers: 8 })
 * loop.on('order.paid', async (msg) => { await charge(msg.payload) })
 * loop.post('order.paid', { orderId: 'o-1', amount: 42 }, { key: 'o-1', priority: 1 })
 * await loop.stop()
 * ```
 */
export function createLoop<M extends MessageMap = MessageMap>(options?: LoopOptions): Loop<M> {
  return new Loop<M>(options)
}
