/**
 * The message loop's public front: producers → bounded priority queue → dispatcher → partitioned worker pool.
 * Every method delegates to a stage built by the engine (`engine/engine.ts`); this class holds no message state.
 *
 * @module
 */

import type { LoopState, ZombieSummary } from '../contracts/events.js'
import type { CircuitState, DeadLetter } from '../contracts/failures.js'
import type { InspectOptions, LoopInspection } from '../contracts/inspection.js'
import type {
  HeaderStamper,
  Message,
  MessageMap,
  MessageType,
  NoResults,
  PostOptions,
  PostResult,
  RequestOptions,
  ResultMap,
  ResultOf,
  SendOptions,
} from '../contracts/message.js'
import type { LoopOptions } from '../contracts/options.js'
import type { ScheduleOptions, ScheduleSpec } from '../contracts/schedules.js'
import type { LoopSnapshot, SnapshotMessage } from '../contracts/snapshot.js'
import type { StopOptions } from '../contracts/stop.js'
import type { MessageTrace } from '../contracts/traces.js'
import type { Handler, Middleware, RegisterOptions } from '../dispatcher/handler.js'
import type { Router } from '../dispatcher/router.js'
import { Engine } from '../engine/engine.js'
import { inspectLoop } from '../engine/inspect.js'
import type { DeadLetterStore } from '../failure/dead-letters.js'
import { checkTypeRetry } from '../failure/retry-policy.js'
import { LoopEmitter } from '../internal/loop-emitter.js'
import * as check from '../internal/validate.js'
import type { MetricsSnapshot } from '../metrics/loop-metrics.js'
import type { CancelResult } from '../requests/cancels.js'
import type { DelayedMessage } from '../timers/delayed-posts.js'
import { LoopControls } from './controls.js'
import { JobKeys } from './jobs.js'
import { Schedules } from './schedules.js'

/**
 * An in-process message loop. Create one with {@link createLoop}.
 *
 * @typeParam M - the message map: type → payload
 * @typeParam Results - what handlers return, by type (see {@link ResultMap}): types `request()`
 *
 * @remarks
 * Guarantees:
 * - **Nothing is lost silently:** every admitted message ends in exactly one outcome — `succeeded`,
 *   `dead-lettered`, `request-failed`, `dropped`, `cancelled`, or handed back in a shutdown snapshot
 *   (`snapshotted`) — counted in {@link Loop.metrics}; a refused post throws (or returns) at once.
 * - **Per-key order:** two messages with the same `key` never run at once; equal-priority messages of
 *   a key start in post order, also across retries and circuit-breaker holds (the key stays claimed).
 * - **Priority with fairness:** a free worker takes the most urgent runnable message; ties go to post
 *   order; linear aging (`agingMs`) bounds overtaking.
 * - **Bounded:** never more than `capacity` messages wait.
 * - **Clear errors:** bad input throws a typed error before anything changes.
 *
 * Complexity per message: O(1) admission and dispatch with the default `levels` queue (O(log k) more
 * when a key is busy, k = messages parked on it).
 * @group Loop
 */
export class Loop<M extends MessageMap = MessageMap, Results extends ResultMap<M> = NoResults> {
  /** Typed lifecycle and message events (eventemitter3). */
  readonly events = new LoopEmitter<M>()
  // Every stage of this loop; the front only delegates.
  readonly #e: Engine<M>
  /** Hands on flow control: force a breaker open or closed, share the rate limits among processes. */
  readonly controls: LoopControls<M>
  /** Messages by their `jobKey`, until they start running: find one, cancel one. */
  readonly jobs: JobKeys<M>
  /** Recurring schedules: upsert, remove, pause, resume, get, list. */
  readonly schedules: Schedules<M>

  /** @internal Use {@link createLoop} (`options`: {@link LoopOptions}). @throws InvalidArgumentError (bad option) */
  constructor(options?: LoopOptions) {
    this.#e = new Engine<M>(options, this.events)
    this.controls = new LoopControls<M>(this.#e)
    this.jobs = new JobKeys<M>(this.#e.jobs)
    this.schedules = new Schedules<M>(this.#e.schedules)
  }

  // ── registration ──────────────────────────────────────────────────────────────────────────────

  /**
   * Registers the handler of a message type.
   * @throws DuplicateHandlerError if the type has one (unless `replace`); InvalidArgumentError
   */
  on<T extends MessageType<M>>(
    type: T,
    handler: Handler<M, T, ResultOf<Results, T>>,
    options?: RegisterOptions<M, T>,
  ): this {
    checkTypeRetry(options, this.#e.options.retry)
    this.#e.registry.on(type, handler, options)
    this.#e.failures.registered(type)
    return this
  }

  /**
   * Registers a router: the handler is chosen by a route key computed from each message at post time. A
   * route key with no handler and no `otherwise()` is refused at post with `UnknownRouteError`, a
   * selector that throws with `InvalidArgumentError` (`cause`: what it threw).
   */
  route<T extends MessageType<M>, R extends string>(
    type: T,
    selector: (message: Message<M, T>) => R,
    options?: RegisterOptions<M, T>,
  ): Router<M, T, R, ResultOf<Results, T>> {
    checkTypeRetry(options, this.#e.options.retry)
    const router = this.#e.registry.route(type, selector, options)
    this.#e.failures.registered(type)
    return router
  }

  /** Appends a middleware around every handler call (outermost first). */
  use(middleware: Middleware<M>): this {
    this.#e.registry.use(middleware)
    return this
  }

  /**
   * Adds a header stamper, run at every post after the ones added before it — e.g. to put the active
   * trace context into every message (see {@link HeaderStamper}): `loop.stamp(() => ({ 'x-env': 'blue' }))`.
   * @throws InvalidArgumentError when `stamper` is not a function
   */
  stamp(stamper: HeaderStamper): this {
    this.#e.admission.stamping.add(check.fn('stamper', stamper) as HeaderStamper)
    return this
  }

  // ── producers ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Admits a message, or throws why not.
   * @returns the admitted message (under `drop-new` it may already be dropped: see `tryPost`)
   * @throws QueueFullError when full under `reject`/`wait`; LoopStoppedError after `stop()`;
   * UnknownMessageTypeError, UnknownRouteError, InvalidArgumentError for bad input
   */
  post<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): Message<M, T> {
    return this.#e.entries.post(type, payload, options, true) as Message<M, T>
  }

  /**
   * Like {@link Loop.post}, but overload and lifecycle refusals come back as a result instead of an
   * exception. Bad input (unknown type, bad options) still throws: it is a bug, not a condition.
   */
  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T> {
    return this.#e.entries.post(type, payload, options, false) as PostResult<M, T>
  }

  /**
   * Admits a message, waiting for space if the queue is full and the policy is `wait`: producers are
   * served by priority then arrival, exactly one per freed slot.
   * @throws (rejects) SendTimeoutError, SendAbortedError, LoopStoppedError, and what `post` throws
   */
  send<T extends MessageType<M>>(type: T, payload: M[T], options?: SendOptions): Promise<Message<M, T>> {
    return this.#e.entries.send(type, payload, options)
  }

  /**
   * Posts a message and resolves with its handler's return value (its last attempt's). Its handler's failure
   * is the caller's: it rejects with the handler's own last error, outcome `request-failed`, no dead letter
   * (unless `options.deadLetter`); any other end with `RequestFailedError` (`outcome`: `dropped`,
   * `cancelled`, `snapshotted`, `timed-out`); a refused post with its own error. `post()` pays nothing for this.
   * @example
   * ```ts
   * const total = await loop.request('cart.total', { cartId }, { waitTimeoutMs: 2_000 })
   * ```
   */
  request<T extends MessageType<M>, R = ResultOf<Results, T>>(
    type: T,
    payload: M[T],
    options?: RequestOptions,
  ): Promise<R> {
    return this.#e.entries.request<R>(type, payload, options)
  }

  /**
   * Cancels one message, by id or as `post()` returned it: a waiting one (queued, parked, held, rate-limited,
   * delayed, backing off) ends `cancelled` at once; a running one has its `ctx.signal` aborted with a
   * `MessageCancelledError` and ends as its handler settles. By id, every holder is searched (O(n)); pass the
   * message for O(1) in most places.
   * @returns `cancelled`, `aborted` (it was running), or `unknown` (finished, or not this loop's)
   */
  cancel(message: string | Message<M>): CancelResult {
    return this.#e.cancels.byUser(message)
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
   * loop.postDelayed('order.timeout', { orderId }, 15 * 60_000, { jobKey: `timeout:${orderId}` })
   * loop.jobs.cancel(`timeout:${orderId}`) // the payment arrived: until it starts, it never runs
   * ```
   */
  postDelayed<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    delayMs: number,
    options?: PostOptions,
  ): DelayedMessage<M, T> {
    return this.#e.entries.schedule(type, payload, 'delayMs', delayMs, options)
  }

  /**
   * Like {@link Loop.postDelayed}, at an absolute clock time (`loop`'s clock, ms); a past time is due at once.
   * @throws InvalidArgumentError for a non-finite `at`, and what `postDelayed` throws
   */
  postAt<T extends MessageType<M>>(type: T, payload: M[T], at: number, options?: PostOptions): DelayedMessage<M, T> {
    return this.#e.entries.schedule(type, payload, 'at', at, options)
  }

  /**
   * How many more messages the loop wants before it pushes back, as in the WHATWG streams API: `capacity − queued`
   * (with backpressure: up to the shed mark). Zero or less: wait for {@link Loop.ready}.
   */
  get desiredSize(): number {
    return this.#e.pacing.desiredSize
  }

  /**
   * Resolves when {@link Loop.desiredSize} is positive — at once if it is. Every producer pacing itself shares
   * one promise per congested period (no listener per producer). Also resolves when the loop stops (a post
   * then throws `LoopStoppedError`). A long import paces itself with `await loop.ready` before each post.
   */
  get ready(): Promise<void> {
    return this.#e.pacing.ready
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────────

  /** The lifecycle state. */
  get state(): LoopState {
    return this.#e.lifecycle.state
  }

  /**
   * Starts dispatching (`created` or `paused` → `running`). With a journal `store`, the first start
   * recovers what the store kept — unfinished messages (queued, interrupted, delayed with the time
   * left, backing off, with their attempts, checkpoints and idempotency keys), dead letters, finished
   * keys — before anything runs, and posts are accepted from then on.
   * @throws StoreError when the store cannot be read; SnapshotError when this loop cannot take what it
   * recovered (a type not registered yet, no room): nothing is recovered, and `start()` may be called again
   */
  start(): this {
    this.#e.refuseIfStopping('start')
    this.#e.recover()
    this.#e.lifecycle.run()
    this.#e.schedulePump()
    return this
  }

  /** Stops starting new handlers; running ones finish, posts are still admitted. */
  pause(): this {
    this.#e.refuseIfStopping('pause')
    this.#e.lifecycle.pause()
    return this
  }

  /** Same as {@link Loop.start}, for a paused loop. */
  resume(): this {
    return this.start()
  }

  /**
   * Resolves once every message accepted so far is committed to the journal `store` — a producer's
   * durable acknowledgement, like a database commit (at once without a store). The loop commits
   * within one event-loop turn of a post; `flushed()` only waits for that commit.
   * @throws (rejects) StoreError when that commit failed: the messages stay accepted, in memory, and
   * the loop tries the commit again (a later `flushed()` resolves once one succeeds)
   */
  flushed(): Promise<void> {
    return this.#e.journal?.flushed() ?? Promise.resolve()
  }

  /** Resolves when nothing is queued and nothing runs (a paused loop resolves only once resumed). */
  drain(): Promise<void> {
    return this.#e.outcomes.drain()
  }

  /**
   * Refuses new posts at once (`LoopStoppedError`, also for producers waiting in `send()`), then
   * drains or cancels what is queued, and resolves once nothing runs. Idempotent.
   * @remarks While a draining stop runs, follow-ups (`ctx.post`) are still admitted: they belong to the
   * work being drained; with `drain: false` they are refused too.
   * Calling `stop({ drain: false })` while a draining stop is in progress escalates it: what is still
   * queued is cancelled and running handlers are aborted; both calls return the same promise.
   * @throws InvalidArgumentError for an unknown option name or a wrong option type (a typo such as
   * `{ deadline: 20_000 }` would otherwise leave the shutdown with no deadline)
   */
  stop(options?: StopOptions): Promise<LoopSnapshot> {
    return this.#e.stopper.stop(options)
  }

  /**
   * Re-admits every message of a shutdown snapshot (from this process or another): queued, held and
   * interrupted ones enter the queue; delayed ones and retries wait what they still had to wait, less the
   * time since the snapshot was taken; attempt counts, checkpoints (`ctx.committed`), per-post policies
   * and idempotency keys continue where they were. All or nothing: a malformed, foreign or wrong-version
   * snapshot, one this loop cannot take (unknown type, no room, a key in flight here), or one (read once)
   * whose getter, `Proxy` or route selector throws (`cause`) — throws `SnapshotError`, changes nothing.
   * @returns how many messages were re-admitted
   * @throws SnapshotError; LoopStoppedError after `stop()`
   */
  restore(snapshot: LoopSnapshot): number {
    this.#e.refuseIfStopping('restore a snapshot', true)
    const restored = this.#e.entries.restore(snapshot)
    this.#e.schedules.reconcile() // the schedules it held meet this loop's
    return restored
  }

  /**
   * @internal Re-admits one message handed over from elsewhere (a snapshot, a transport's delivery) as
   * {@link Loop.restore} would; its idempotency key takes over a `processing` or `committed` ledger entry.
   * @returns the admitted message, or `undefined` when its idempotency key is done since (skipped)
   * @throws SnapshotError (malformed, an unknown type, no room, its key already in flight here) and
   * nothing changed; LoopStoppedError after `stop()`
   */
  readmit(message: SnapshotMessage): Message<M> | undefined {
    this.#e.refuseIfStopping('re-admit a message', true)
    return this.#e.entries.readmit(message)
  }

  /**
   * Changes the worker count at run time. Growing starts waiting work at once; shrinking lets running
   * handlers finish; per-key order is unaffected. Emits `workers`; stops an autoscaler for good.
   */
  resize(workers: number): this {
    this.#e.resize(check.positiveInteger('workers', workers, 65_536))
    return this
  }

  // ── observability ─────────────────────────────────────────────────────────────────────────────

  /** Counters, gauges and histograms (a fresh plain-data snapshot). */
  metrics(): MetricsSnapshot {
    return this.#e.snapshotMetrics()
  }

  /**
   * The lifecycle trace of a message — its states with times, its attempts with errors and durations —
   * while it is known: live messages that were traced (by default those that failed, were held or
   * retried; every message with `traces: 'all'`), and the most recent `keepTraces` finished ones.
   * @param id - a message id from this loop
   * @returns a plain copy, or `undefined` when the message is not (or no longer) traced
   */
  trace(id: string): MessageTrace | undefined {
    const seq = this.#e.entries.seqOf(id)
    return seq === undefined ? undefined : this.#e.traces.find(seq)
  }

  /**
   * A read-only picture of the loop now ({@link LoopInspection}): the busiest key lanes with their holders,
   * the running handlers, the key groups, the rate limits; with `traceKey`, that key's traces. It costs
   * O(busy keys + running + budgets) per call and nothing per message: call it at human rates (once a second).
   * @throws InvalidArgumentError for options that are not an object, an unknown option, `keys` not an
   * integer from 0 to 10000, or `traceKey` not a string or a finite number
   */
  inspect(options?: InspectOptions): LoopInspection {
    return inspectLoop(this.#e, options)
  }

  /** The in-memory dead-letter store: `list`, `replay` (a fresh attempt budget), `purge`. */
  get deadLetters(): DeadLetterStore {
    return this.#e.failures.deadLetters
  }

  /**
   * Re-posts a dead letter — from `loop.deadLetters` or from your own sink — as a new message with a
   * fresh attempt budget (its type, payload, key, priority and idempotency key; its checkpoint carried
   * over, so a handler resumes after its last commit point).
   * @throws what `post` throws
   */
  replay(letter: DeadLetter): Message<M> {
    return this.#e.entries.replay(letter, true) as Message<M>
  }

  /** Circuit breakers that are not closed: route, state, messages held. */
  circuits(): { route: string; state: CircuitState; held: number }[] {
    return this.#e.failures.circuits.states()
  }

  /** Creates or replaces the recurring schedule `id`: {@link Schedules.upsert}. */
  schedule<T extends MessageType<M>>(id: string, spec: ScheduleSpec, type: T, payload: M[T], o?: ScheduleOptions) {
    return this.schedules.upsert(id, spec, type, payload, o)
  }

  /** Timed-out handlers still unsettled after `graceMs`: what ran, for how long. */
  zombies(): ZombieSummary[] {
    return this.#e.watchdog.zombies().map(({ epoch, label, ageMs }) => ({ epoch, label, ageMs }))
  }

  /** Messages waiting (ready + parked). */
  get queued(): number {
    return this.#e.queue.length
  }

  /** Handlers running now. */
  get running(): number {
    return this.#e.pool.running
  }

  /**
   * @internal Per-message side-table entries alive: the rare per-post settings (`handlerTimeoutMs`, `retry`,
   * `idempotencyKey`, a checkpoint) of messages in flight. Zero at rest: every outcome frees its entry.
   */
  get sideTableSize(): number {
    return this.#e.extras.size
  }
}
