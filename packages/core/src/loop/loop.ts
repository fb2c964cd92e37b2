/**
 * The message loop: producers → bounded priority queue → dispatcher → partitioned worker pool.
 *
 * @module
 */
import type { Clock } from '../clock.js'
import type { Handler, Middleware, RegisterOptions } from '../dispatcher/handler.js'
import { Registry } from '../dispatcher/registry.js'
import type { Router } from '../dispatcher/router.js'
import { HopLimitError, LoopStoppedError, QueueFullError, type QueueLoad, SendAbortedError } from '../errors.js'
import { Envelope, Where } from '../internal/envelope.js'
import * as check from '../internal/validate.js'
import type { Message, MessageMap, MessageType, PostOptions, PostResult, SendOptions } from '../message.js'
import { LoopMetrics, type MetricsSnapshot } from '../metrics/loop-metrics.js'
import { WorkerPool } from '../pool/worker-pool.js'
import { HeapReadyQueue } from '../queue/heap-ready-queue.js'
import { LevelQueue } from '../queue/level-queue.js'
import { RunQueue } from '../queue/run-queue.js'
import { Urgency } from '../queue/urgency.js'
import { AttemptContext } from './attempt-context.js'
import { type DropReason, LoopEmitter, type LoopState } from './events.js'
import { type LoopOptions, type ResolvedLoopOptions, resolveOptions } from './options.js'
import { checkPostOptions } from './post-options.js'
import { SendGate } from './send-gate.js'

/** `#admit` either throws refusals (post) or returns them (tryPost). */
enum Mode {
  Throw = 0,
  Result = 1,
}

const RESOLVED = Promise.resolve()

/** Options of {@link Loop.stop}. */
export interface StopOptions {
  /**
   * `true`: run every queued message first. `false`: cancel what is queued (outcome `cancelled`),
   * abort running handlers' `signal`, and wait only for them to settle.
   * @defaultValue true
   */
  readonly drain?: boolean
}

/**
 * An in-process message loop. Create one with {@link createLoop}.
 *
 * @typeParam M - the message map: type → payload
 *
 * @remarks
 * Guarantees (BRIEF §3), each enforced in one place:
 * - **I1** every admitted message ends in exactly one outcome — `succeeded`, `failed`, `dropped` or
 *   `cancelled` — counted in {@link Loop.metrics}; a refused post throws (or returns) at once.
 * - **I2** two messages with the same `key` never run at once; equal-priority messages of a key start
 *   in post order (`RunQueue`).
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
  // The reading end() took, reusable by the next begin() of the same pump stretch when only loop code
  // ran in between (no listener, no selector): it saves one of three ~40 ns clock reads per message,
  // and can lag real time only by loop code, never by user code.
  #lastReading = 0
  #lastReadingValid = false
  readonly #registry = new Registry<M>()
  readonly #queue: RunQueue
  readonly #pool: WorkerPool<AttemptContext<M>>
  readonly #gate: SendGate<M>
  readonly #metrics = new LoopMetrics()
  #state: LoopState
  #seq = 0
  // A pump is queued on the microtask queue; posts in one synchronous burst share it.
  #pumpScheduled = false
  readonly #pumpNow = (): void => {
    this.#pumpScheduled = false
    this.#pool.pump()
  }
  // Resolvers of drain(); settled on the next transition to idle.
  #idleWaiters: (() => void)[] = []
  #stopping: Promise<void> | undefined
  // A draining stop still admits follow-ups (ctx.post) of running handlers: they are part of the work
  // being drained, and refusing them would cut multi-step flows in half.
  #drainOnStop = false

  /**
   * @param options - see {@link LoopOptions}
   * @throws InvalidArgumentError for a bad option
   */
  constructor(options?: LoopOptions) {
    this.#options = resolveOptions(options)
    this.#clock = this.#options.clock
    const urgency = new Urgency(this.#options.agingMs)
    const ready = this.#options.queue === 'heap' ? new HeapReadyQueue(urgency) : new LevelQueue(urgency)
    this.#queue = new RunQueue(ready, urgency)
    this.#pool = new WorkerPool<AttemptContext<M>>(
      this,
      this.#clock,
      this.#options.workers,
      this.#options.dispatchBudget,
    )
    this.#gate = new SendGate<M>(
      this.#clock,
      (w) => this.#admit(w.type, w.payload, w.options, 0, undefined, Mode.Throw),
      (type, error) => this.#refused(type, error),
    )
    this.#state = this.#options.autoStart ? 'running' : 'created'
  }

  // ── registration ──────────────────────────────────────────────────────────────────────────────

  /**
   * Registers the handler of a message type.
   * @throws DuplicateHandlerError if the type has one (unless `replace`); InvalidArgumentError
   */
  on<T extends MessageType<M>>(type: T, handler: Handler<M, T>, options?: RegisterOptions): this {
    this.#registry.on(type, handler, options)
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
    return this.#registry.route(type, selector, options)
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
    this.#checkOptions(type, options, false)
    return this.#admit(type, payload, options, 0, undefined, Mode.Throw) as Message<M, T>
  }

  /**
   * Like {@link Loop.post}, but overload and lifecycle refusals come back as a result instead of an
   * exception. Bad input (unknown type, bad options) still throws: it is a bug, not a condition.
   */
  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T> {
    this.#metrics.posted++
    this.#checkOptions(type, options, false)
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
        this.#queue.length >= this.#options.capacity &&
        this.#state !== 'draining' &&
        this.#state !== 'stopped'
      if (wait) {
        this.#registry.resolve(type) // refuse unknown types now, not after the wait
        return this.#gate.wait(
          type,
          payload,
          options,
          options?.priority ?? this.#options.defaultPriority,
          this.#load(),
        ) as Promise<Message<M, T>>
      }
    } catch (error) {
      this.#refused(type, error as Error)
      return Promise.reject(error)
    }
    try {
      return Promise.resolve(this.#admit(type, payload, options, 0, undefined, Mode.Throw) as Message<M, T>)
    } catch (error) {
      return Promise.reject(error) // #admit counted the refusal
    }
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
  stop(options?: StopOptions): Promise<void> {
    const drain = options?.drain === undefined ? true : check.boolean('options.drain', options.drain)
    if (this.#stopping !== undefined) {
      if (!drain && this.#drainOnStop) this.#escalate() // a graceful stop that ran out of patience
      return this.#stopping
    }
    this.#drainOnStop = drain
    this.#setState('draining')
    this.#gate.rejectAll((w) => new LoopStoppedError(`send \`${w.type}\``, 'draining'))
    if (!drain) this.#cancelQueued()
    this.#schedulePump()
    this.#stopping = this.drain().then(() => {
      if (this.#drainOnStop) this.events.emit('drained')
      this.#setState('stopped')
    })
    return this.#stopping
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
    return this.#metrics.snapshot({
      ...load,
      parked: this.#queue.parked,
      workers: this.#pool.size,
      busyKeys: this.#queue.busyKeys,
      fill: load.queued / load.capacity,
    })
  }

  /** Messages waiting (ready + parked). */
  get queued(): number {
    return this.#queue.length
  }

  /** Handlers running now. */
  get running(): number {
    return this.#pool.running
  }

  // ── PoolHost (called by the worker pool) ──────────────────────────────────────────────────────

  /** @internal */
  canDispatch(): boolean {
    return this.#state === 'running' || this.#state === 'draining'
  }

  /** @internal */
  take(): Envelope | undefined {
    const m = this.#queue.take()
    if (m !== undefined && this.#gate.length > 0) {
      this.#lastReadingValid = false // admission may run route selectors and listeners
      this.#gate.admitWhile(() => this.#queue.length < this.#options.capacity)
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
    this.events.emit('started', m as unknown as Message<M>)
    return new AttemptContext<M>(this, m, 1, now)
  }

  /** @internal */
  invoke(m: Envelope, ctx: AttemptContext<M>): unknown {
    return this.#registry.invoke(m, ctx)
  }

  /** @internal */
  end(m: Envelope, ctx: AttemptContext<M>, ok: boolean, value: unknown): void {
    const now = this.#clock.now()
    const duration = now - ctx.startedAt
    this.#metrics.recordHandler(duration)
    m.where = Where.Done
    if (m.key !== undefined) this.#queue.release(m.key)
    let heard: boolean
    if (ok) {
      this.#metrics.succeeded++
      heard = this.events.emit('succeeded', m as unknown as Message<M>, duration)
    } else {
      this.#metrics.failed++
      heard = this.events.emit('failed', m as unknown as Message<M>, value)
    }
    if (this.#isIdle()) heard = this.#onIdle() || heard
    this.#lastReading = now
    this.#lastReadingValid = !heard
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
      this.#refused(type, error)
      throw error
    }
    this.#checkOptions(type, options, false)
    return this.#admit(type, payload, options, hops, parent.traceId, mode === 'throw' ? Mode.Throw : Mode.Result) as
      | Message<M, T>
      | PostResult<M, T>
  }

  // ── admission ─────────────────────────────────────────────────────────────────────────────────

  // Validates, then admits, drops or refuses; `posted` was already counted by the caller.
  #admit(
    type: string,
    payload: unknown,
    options: PostOptions | undefined,
    hops: number,
    trace: string | undefined,
    mode: Mode,
  ): Message<M> | PostResult<M, MessageType<M>> {
    let m: Envelope
    try {
      const router = this.#registry.resolve(type)
      if (this.#state === 'stopped' || (this.#state === 'draining' && !(hops > 0 && this.#drainOnStop))) {
        return this.#refuse(type, new LoopStoppedError(`post \`${type}\``, this.#state), mode)
      }
      const priority = options?.priority ?? this.#options.defaultPriority
      m = new Envelope(
        this.#options.idPrefix,
        ++this.#seq,
        type,
        payload,
        options?.key,
        priority,
        this.#clock.now(), // exact: the aging bound (I3) is stated in real post times
        hops,
        trace,
      )
      if (router !== undefined) m.routeKey = router.select(m as unknown as Message<MessageMap, never>)
    } catch (error) {
      if (!(error instanceof LoopStoppedError)) this.#refused(type, error as Error) // #refuse counted it
      throw error
    }
    if (this.#queue.length >= this.#options.capacity) {
      const overflow = options?.overflow ?? this.#options.overflow
      if (overflow === 'reject' || overflow === 'wait')
        return this.#refuse(type, new QueueFullError(type, this.#load()), mode)
      const victim = overflow === 'drop-oldest-lowest' ? this.#queue.evictLowest(m.priority) : undefined
      if (victim === undefined) return this.#acceptDropped(m, mode)
      this.#drop(victim, 'drop-oldest-lowest')
    }
    this.#metrics.accepted++
    this.#queue.push(m)
    this.events.emit('posted', m as unknown as Message<M>)
    this.#schedulePump()
    return mode === Mode.Throw
      ? (m as unknown as Message<M>)
      : { ok: true, status: 'queued', message: m as unknown as Message<M> }
  }

  // Validates per-post options; a bad one is a refused post (counted, evented) and throws.
  #checkOptions(type: string, options: PostOptions | undefined, forSend: boolean): void {
    try {
      checkPostOptions(options, forSend)
    } catch (error) {
      this.#refused(type, error as Error)
      throw error
    }
  }

  #acceptDropped(m: Envelope, mode: Mode): Message<M> | PostResult<M, MessageType<M>> {
    this.#metrics.accepted++
    this.#drop(m, 'drop-new')
    const message = m as unknown as Message<M>
    return mode === Mode.Throw ? message : { ok: false, status: 'dropped', message }
  }

  #drop(m: Envelope, reason: DropReason): void {
    m.where = Where.Done
    this.#metrics.dropped++
    this.events.emit('dropped', m as unknown as Message<M>, reason)
  }

  #refuse(type: string, error: QueueFullError | LoopStoppedError, mode: Mode): PostResult<M, MessageType<M>> {
    this.#refused(type, error)
    if (mode === Mode.Throw) throw error
    return { ok: false, status: error instanceof QueueFullError ? 'full' : 'stopped', error }
  }

  #refused(type: string, error: Error): void {
    this.#metrics.rejected++
    this.events.emit('rejected', type, error)
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
    return this.#queue.length === 0 && this.#pool.running === 0
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

  #escalate(): void {
    this.#drainOnStop = false
    this.#cancelQueued()
  }

  #cancelQueued(): void {
    for (const m of this.#queue.clear()) {
      m.where = Where.Done
      this.#metrics.cancelled++
      this.events.emit('cancelled', m as unknown as Message<M>)
    }
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
