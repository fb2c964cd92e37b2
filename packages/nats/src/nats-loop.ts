/**
 * The distributed loop: the same handlers as an in-process loop, run by every process that shares the
 * loop's name, on NATS JetStream. `post` publishes into the message's partition; each process pulls
 * every partition and runs what it pulled in its own local loop (retries, timeouts, breakers, traces,
 * metrics: core's), acknowledging a message only once it ended there.
 *
 * @module
 */
import {
  createLoop,
  type Handler,
  type HandlerContext,
  type HeaderStamper,
  InvalidArgumentError,
  type Loop,
  type LoopEmitter,
  LoopStoppedError,
  type Message,
  type MessageMap,
  type MessageType,
  type Middleware,
  type PressureTransition,
  type RegisterOptions,
  refusalStatusOf,
} from '@flowing/core'
import type { JetStreamManager } from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { NatsDeadLetters } from './dead-letters.js'
import { DeliveryError } from './errors.js'
import { toMessage } from './internal/codec.js'
import { makeRunner, ownershipOptions } from './internal/consuming.js'
import { type FollowUp, NatsContext } from './internal/context.js'
import { DelayMover } from './internal/delays.js'
import { Deliveries, followConnection } from './internal/deliveries.js'
import { JOB_KEY_HEADER, NatsJobs } from './internal/job-keys.js'
import { Ownership, type OwnershipBuckets } from './internal/ownership.js'
import { checkDelay, checkPost, type NatsPostOptions } from './internal/post-input.js'
import { Posting } from './internal/posting.js'
import { Publisher } from './internal/publisher.js'
import type { Runner } from './internal/runner.js'
import { ScheduleKeeper } from './internal/schedule-keeper.js'
import { SharedFlow } from './internal/shared-flow.js'
import { StreamPressure } from './internal/stream-pressure.js'
import { pause } from './internal/timers.js'
import type { Topology } from './internal/topology.js'
import { NatsJobKeys } from './jobs.js'
import type { KvIdempotencyStore } from './kv-ledger.js'
import type { ResolvedNatsOptions } from './options.js'
import { NatsSchedules } from './schedules.js'
import type { NatsMetrics, NatsPostResult, NatsStopOptions, NatsStopReport } from './types.js'

/** What a NATS loop is built from (see `createNatsLoop`). */
export interface Parts {
  readonly buckets: OwnershipBuckets
  /** The shared breakers' and pauses' bucket and the schedules' (see `SharedFlow`, `ScheduleKeeper`). */
  readonly circuits: KV
  readonly schedules: KV
  /** The job keys' bucket (see `NatsJobs`). */
  readonly jobs: KV
  readonly nc: NatsConnection
  readonly own: boolean
  readonly jsm: JetStreamManager
  readonly topology: Topology
  readonly options: ResolvedNatsOptions
  readonly ledger: KvIdempotencyStore | undefined
}

/**
 * A loop whose messages are shared by every process of the same name. Made by {@link createNatsLoop}.
 *
 * @group NATS loop
 */
export class NatsLoop<M extends MessageMap = MessageMap> {
  /** Its dead letters, shared by every process. */
  readonly deadLetters: NatsDeadLetters
  /** The local loop that runs this process's handlers (its traces, circuits, zombies). */
  readonly local: Loop<M>
  /** The server's version (`nats-server` 2.9 and later). */
  readonly serverVersion: string
  /** Recurring schedules, each due time fired once among the loop's processes. */
  readonly schedules: NatsSchedules
  /** Messages by their job key, from any process, until they start. */
  readonly jobs: NatsJobKeys
  readonly #jobs: NatsJobs
  readonly #p: Parts
  readonly #posting: Posting
  readonly #publisher: Publisher
  readonly #deliveries: Deliveries
  readonly #runner: Runner<M>
  readonly #ownership: Ownership
  readonly #delays: DelayMover
  readonly #shared: SharedFlow<M>
  readonly #followUp: FollowUp
  readonly #pressure: StreamPressure | undefined
  // `stamp()`'s stampers, in order (replaced, never mutated: one may add another while it runs).
  #stampers: readonly HeaderStamper[] = []
  #state: 'idle' | 'running' | 'stopping' = 'idle'
  #stopped: Promise<NatsStopReport> | undefined

  /** @internal Use {@link createNatsLoop}. */
  constructor(parts: Parts) {
    this.#p = parts
    const { nc, jsm, topology, options: o, ledger, buckets } = parts
    this.serverVersion = nc.info?.version ?? 'unknown'
    const js = jsm.jetstream()
    this.#publisher = new Publisher(js, topology.partitionBound)
    this.local = createLoop<M>({
      ...o.loop,
      clock: o.clock,
      workers: o.workers,
      capacity: o.partitions * o.maxAckPending + 64, // every owned partition's messages at once
      autoStart: false,
      ...(ledger === undefined ? {} : { idempotency: { store: ledger, ttlMs: o.idempotencyTtlMs ?? 0 } }),
    })
    this.deadLetters = new NatsDeadLetters(o.clock, jsm, topology, this.#publisher)
    this.#deliveries = new Deliveries(o.clock, o.leaseMs, (d) => this.#runner.leaseLost(d))
    const wiring = { ...parts, js, local: this.local, deliveries: this.#deliveries, deadLetters: this.deadLetters }
    this.#runner = makeRunner({ ...wiring, holds: (p, token) => this.#ownership.holds(p, token) })
    // The rate limits are divided among the live processes, as many as the last look of the ownership saw.
    const membersChanged = (n: number) => this.local.controls.shareRateLimits(n)
    this.#ownership = new Ownership(buckets, { ...ownershipOptions(o), membersChanged }, this.#runner)
    this.#shared = new SharedFlow(parts.circuits, this.local, this.#ownership.member, o.clock, o.onError)
    this.#jobs = new NatsJobs(parts.jobs, o.clock)
    this.#jobs.follow(this.local.events, (m) => this.#deliveries.get(m.id)?.wire.id ?? m.traceId)
    this.jobs = new NatsJobKeys(this.#jobs)
    const stampers = () => this.#stampers
    this.#posting = new Posting({ publisher: this.#publisher, topology, options: o, jobs: this.#jobs, stampers })
    const keeper = new ScheduleKeeper(parts.schedules, o.clock, this.#posting.schedules())
    this.schedules = new NatsSchedules(keeper, o.clock, (action) => this.#refuseIfStopped(action))
    const hooks = { schedules: keeper, jobs: this.#jobs }
    this.#delays = new DelayMover(o.clock, js, topology, this.#publisher, hooks)
    this.#followUp = this.#posting.followUp()
    const pressed = (t: PressureTransition) => this.local.events.emit('backpressure', t)
    this.#pressure = StreamPressure.started(o, () => topology.workState(jsm), pressed)
    void followConnection(nc, this.#deliveries, () => this.#runner.reconnected())
  }

  /** Its local loop's events (`succeeded`, `failed`, `dead-lettered`, `retrying`, …) for this process. */
  get events(): LoopEmitter<M> {
    return this.local.events
  }

  /**
   * Registers the handler of a type (as `Loop.on`); its `ctx.post` publishes into the streams. The
   * handler — like the events, traces and metrics of {@link NatsLoop.local} — sees the id of this
   * delivery in this process's local loop; the id its post returned is the root's `traceId`.
   */
  on<T extends MessageType<M>>(type: T, handler: Handler<M, T>, options?: RegisterOptions<M, T>): this {
    this.local.on(type, (m, ctx) => this.#run(m, ctx, handler), options)
    return this
  }

  /** Appends a middleware around every handler call (as `Loop.use`). */
  use(middleware: Middleware<M>): this {
    this.local.use((m, ctx, next) => middleware(m, this.#context(m, ctx), next))
    return this
  }

  /**
   * Adds a header stamper (as `Loop.stamp`), run at every post and follow-up of this process, in the
   * poster's async context, after the ones added before it — e.g. `@flowing/otel` puts the active
   * trace context there. What it returns travels as the message's headers.
   * @throws InvalidArgumentError when `stamper` is not a function
   */
  stamp(stamper: HeaderStamper): this {
    if (typeof stamper !== 'function') throw new InvalidArgumentError('stamper', 'a function', stamper)
    this.#stampers = [...this.#stampers, stamper]
    return this
  }

  /** Joins the loop's processes: takes its share of the partitions and consumes them; moves due delays. */
  async start(): Promise<this> {
    if (this.#state !== 'idle') return this
    this.#state = 'running'
    this.local.start()
    this.#deliveries.start()
    this.#runner.start()
    await this.#shared.start()
    await this.#ownership.start()
    await this.#delays.start()
    return this
  }

  /**
   * Publishes a message into its key's partition; resolves once the stream stored it (the durable
   * acknowledgement), with its distributed id — the same on every delivery, the `traceId` its handler
   * and its follow-ups see (a handler's `msg.id` is its delivery's id in the local loop).
   *
   * @throws InvalidArgumentError; QueueFullError when the stream is full; BackpressureError past the
   * shed or reject watermark (with `backpressure`); DuplicateMessageError when
   * the server saw its idempotency key within its duplicate window; PublishError; LoopStoppedError
   */
  async post<T extends MessageType<M>>(type: T, payload: M[T], options?: NatsPostOptions): Promise<Message<M, T>> {
    checkPost(type, options)
    this.#refuseIfStopped('post')
    this.#pressure?.admit(type, options?.priority ?? 5)
    const wire = await this.#posting.send(type, payload, options, undefined)
    return toMessage<M, T>(wire, this.#p.options.clock)
  }

  /** As {@link NatsLoop.post}, but resolves with a refusal instead of rejecting for a full stream, a duplicate or a stop. */
  async tryPost<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    options?: NatsPostOptions,
  ): Promise<NatsPostResult<M, T>> {
    try {
      return { ok: true, status: 'queued', message: await this.post(type, payload, options) }
    } catch (error) {
      const status = refusalStatusOf(error)
      if (status === undefined) throw error
      return { ok: false, status, error: error as Error }
    }
  }

  /**
   * Publishes a message that enters its partition `delayMs` from now (never earlier, by the wall-clock
   * time of the `clock` of the process that moves it); resolves once the delayed stream stored it.
   */
  async postDelayed<T extends MessageType<M>>(
    type: T,
    payload: M[T],
    delayMs: number,
    options?: NatsPostOptions,
  ): Promise<Message<M, T>> {
    checkPost(type, options)
    const delay = checkDelay(delayMs)
    this.#refuseIfStopped('post')
    const wire = await this.#posting.send(type, payload, options, delay)
    return toMessage<M, T>(wire, this.#p.options.clock)
  }

  /**
   * Resolves once the streams are empty — nothing waiting, delayed or running in any process — and
   * this process holds nothing. It asks the server every 20 ms of the loop's `clock` (drive a virtual
   * clock meanwhile).
   */
  async drain(): Promise<void> {
    const { jsm, topology } = this.#p
    for (;;) {
      // A request made while the client reconnects is lost (it times out): ask again.
      const stored = await topology.stored(jsm).catch(() => undefined)
      const idle = this.#deliveries.size === 0 && this.local.queued === 0 && this.local.running === 0
      if (idle && stored === 0) return
      await pause(this.#p.options.clock, 20)
    }
  }

  /** The partitions' fill, together: messages stored (waiting or held) over their bounds' sum. */
  async fill(): Promise<{ readonly messages: number; readonly maxMessages: number; readonly fill: number }> {
    const { messages, maxMessages } = await this.#p.topology.workState(this.#p.jsm)
    return { messages, maxMessages, fill: messages / maxMessages }
  }

  /**
   * Stops pulling, lets what this process holds run on until `deadlineMs`, hands whatever is still
   * unfinished back to the server — others run it at once, a backing-off retry after what it still had
   * to wait — and closes the connection it opened.
   *
   * @throws InvalidArgumentError for a bad deadline (the promise rejects)
   */
  stop(options?: NatsStopOptions): Promise<NatsStopReport> {
    this.#stopped ??= this.#stop(options)
    return this.#stopped
  }

  /** Counters and gauges of this process. */
  metrics(): NatsMetrics {
    return {
      local: this.local.metrics(),
      held: this.#deliveries.size,
      partitions: this.#runner.partitions,
      ...this.#publisher.counters,
      ...this.#runner.counters,
      leasesLost: this.#deliveries.lost,
      delayedMoved: this.#delays.moved,
      jobsSkipped: this.#jobs.skipped,
    }
  }

  async #stop(options: NatsStopOptions | undefined): Promise<NatsStopReport> {
    const deadlineMs = options?.deadlineMs ?? 10_000
    if (typeof deadlineMs !== 'number' || !(deadlineMs >= 0)) {
      throw new InvalidArgumentError('options.deadlineMs', 'a number ≥ 0', deadlineMs)
    }
    const started = this.#state === 'running'
    this.#state = 'stopping'
    this.#pressure?.stop()
    await this.#runner.stopPulling()
    await this.#delays.stop()
    const snapshot = await this.local.stop({ deadlineMs, ...(options?.signal ? { signal: options.signal } : {}) })
    const handedBack = this.#runner.handBack(snapshot.messages)
    await this.#runner.recordHandBacks()
    if (started) await this.#ownership.stop() // its partitions go to the others at once
    this.#shared.stop()
    this.#deliveries.stop()
    await this.#runner.ended()
    await this.#p.nc.flush().catch(() => {})
    if (this.#p.own) await this.#p.nc.close()
    return { handedBack }
  }

  #refuseIfStopped(action: string): void {
    if (this.#state === 'stopping') throw new LoopStoppedError(action, 'stopped')
  }

  // A handler (or middleware) starts: refused when this process no longer holds the message.
  #context(m: Message<M>, ctx: HandlerContext<M>): NatsContext<M> {
    const d = this.#deliveries.starting(m.id)
    if (d !== undefined && !this.#runner.mayStart(d)) {
      throw new DeliveryError(m.id, m.type, 'dropped', 'its lease or its partition lapsed here before it started')
    }
    return new NatsContext(ctx, d, this.#followUp)
  }

  // A handler starts: under its job key, only if the key still names its message (see `NatsJobs`).
  #run<T extends MessageType<M>>(m: Message<M, T>, ctx: HandlerContext<M>, handler: Handler<M, T>): unknown {
    const c = this.#context(m, ctx)
    const jobKey = m.headers[JOB_KEY_HEADER]
    if (jobKey === undefined) return handler(m, c)
    return this.#jobs.guard(jobKey, this.#deliveries.get(m.id)?.wire.id ?? m.traceId, () => handler(m, c))
  }
}
