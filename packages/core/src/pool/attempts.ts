/**
 * The worker pool's host: what happens around one attempt of one message — take the next runnable
 * message, begin the attempt (its deadline on the watchdog), invoke the handler chain (after an async
 * ledger's claim), and end it: a success goes to the outcomes, a failure to the failure stage, a
 * timed-out handler that settles late only to the zombie count.
 *
 * ```
 *  pool.pump ─▶ take ─▶ begin ─▶ started ─▶ invoke ─▶ … settles ─▶ end ─┬─ ok ─────▶ outcomes.succeeded
 *                                                                      ├─ failed ─▶ failures.failed
 *                                                                      └─ unrun ──▶ snapshotted / dropped
 * ```
 *
 * @module
 */
import { type Attempt, FencedError, HandlerTimeoutError } from '@flowing/watchdog'
import type { Message, MessageMap, MessageType, PostOptions, PostResult } from '../contracts/message.js'
import type { HandlerContext } from '../dispatcher/handler.js'
import { LoopAbortedError } from '../errors.js'
import { DuplicateSkip } from '../idempotency/ledger.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import { isInstance } from '../internal/total.js'
import { Journal } from '../journal/journal.js'
import { AttemptContext } from './attempt-context.js'
import type { AttemptEndPorts, AttemptParts, AttemptStartPorts } from './attempt-ports.js'
import { commitPoint } from './commit-point.js'
import { compensate } from './compensate.js'
import type { PoolHost } from './worker-pool.js'

const NOT_REUSABLE = -1 // a reading mark no user-code count equals: the next begin() reads the clock

/** The abort reason of attempts cut off by a stop's deadline: their messages are handed back. */
export const HANDED_BACK = new LoopAbortedError()

/** Begins, runs and ends attempts for the worker pool; also `ctx.post` and `ctx.commit`. */
export class Attempts<M extends MessageMap> implements PoolHost<AttemptContext<M>> {
  readonly #p: AttemptParts<M>
  readonly #starts: AttemptStartPorts
  readonly #ends: AttemptEndPorts<M>
  readonly #events: LoopEmitter<M>
  // The reading end() took, reused by the next begin() of the same pump stretch while the emitter's
  // user-code count has not moved since (no listener, selector or logger ran): one clock read saved
  // per message, lagging real time only by loop code. NOT_REUSABLE after a stretch or a failure.
  #lastReading = 0
  #lastReadingMark = NOT_REUSABLE
  // The registry's `entered` callback: one closure per loop, never per message.
  readonly #entered = (ctx: HandlerContext<M>): void => this.#enter(ctx as AttemptContext<M>)

  /** @param parts - the stages an attempt touches */
  constructor(parts: AttemptParts<M>) {
    this.#p = parts
    this.#starts = parts.starts
    this.#ends = parts.ends
    this.#events = parts.events
  }

  canDispatch(): boolean {
    return this.#starts.lifecycle.dispatches
  }

  take(): Envelope | undefined {
    const gate = this.#starts.gate
    if (gate !== undefined) {
      this.#events.userCodeRan() // a resource gate's open() may be user code
      if (!gate.allows()) return undefined
    }
    const m = this.#starts.queue.take()
    if (m !== undefined) this.#starts.pacing.roomFreed()
    return m
  }

  pumped(): void {
    this.#lastReadingMark = NOT_REUSABLE
  }

  begin(m: Envelope): AttemptContext<M> {
    const p = this.#p
    const now = this.#lastReadingMark === this.#events.userCode ? this.#lastReading : p.clock.now()
    this.#lastReadingMark = NOT_REUSABLE
    p.metrics.recordWait(m.priority, now - m.postedAt)
    const attempt = this.#ends.failures.attemptOf(m)
    this.#ends.failures.started(m, attempt, now)
    const timeoutMs = this.timeoutFor(m)
    const ctx =
      timeoutMs === Number.POSITIVE_INFINITY
        ? new AttemptContext<M>(this, m, attempt, now)
        : new AttemptContext<M>(this, m, attempt, now, this.#guard(m, timeoutMs, now))
    const booking = this.#starts.limits.claim(m)
    if (booking !== undefined) ctx.booking = booking
    return ctx
  }

  #guard(m: Envelope, timeoutMs: number, now: number): Attempt {
    const heartbeatMs = this.#p.registry.heartbeatFor(m.type)
    return this.#ends.watchdog.guard(
      heartbeatMs === undefined
        ? { timeoutMs, label: m, now, queued: true }
        : { timeoutMs, heartbeatMs, label: m, now },
    )
  }

  // The handler of `ctx`'s attempt was called (or the attempt ended without it): its booked start counts
  // from a reading taken now, never earlier than the handler's first statement.
  #enter(ctx: AttemptContext<M>): void {
    const booking = ctx.booking
    if (booking === undefined) return // entered already, or the attempt ended first (a zombie's late call)
    ctx.booking = undefined
    this.#starts.limits.entered(booking, this.#p.clock.now())
  }

  started(m: Envelope): void {
    const events = this.#p.events
    if (events.hears.started) events.emit('started', m as unknown as Message<M>)
  }

  /**
   * Runs the handler chain of `m` — once the crash-loop guard lets it (`guarded`: it did), and after an
   * async idempotency store's claim (before the first attempt).
   */
  invoke(m: Envelope, ctx: AttemptContext<M>, guarded = false): unknown {
    const journal = this.#ends.journal
    if (journal !== undefined && !guarded) {
      const wait = journal.guard.beforeRun(m, ctx) // its row says `running` from here
      if (wait !== undefined) return this.#afterGuard(wait, m, ctx)
    }
    const { registry } = this.#p
    const ledger = this.#p.records.ledger
    const entered = ctx.booking === undefined ? undefined : this.#entered
    const claim = ledger.current?.awaitClaim(m) // an async idempotency store: claimed before the first attempt
    if (claim === undefined) return registry.invoke(m, ctx, entered)
    return Promise.resolve(claim).then((entry) => {
      if (entry !== undefined) throw new DuplicateSkip(entry)
      if (ctx.signal.aborted) throw ctx.signal.reason // timed out or handed back while it waited
      return registry.invoke(m, ctx, entered)
    })
  }

  // The crash-loop guard made the attempt wait (its start committed first, or a suspect's solo turn).
  #afterGuard(wait: Promise<void>, m: Envelope, ctx: AttemptContext<M>): Promise<unknown> {
    return wait.then(() => {
      if (ctx.signal.aborted) throw ctx.signal.reason // timed out or handed back while it waited
      return this.invoke(m, ctx, true)
    })
  }

  end(m: Envelope, ctx: AttemptContext<M>, ok: boolean, value: unknown): void {
    ctx.end() // from here its effects through ctx are fenced
    this.#ends.journal?.guard.ended(m) // its row no longer says `running`
    if (ctx.booking !== undefined) this.#enter(ctx) // its handler was never called: counted from now
    const p = this.#p
    if (this.#starts.queue.groups !== undefined) this.#starts.queue.attemptEnded(m) // its group's slot is free
    if (ok && ctx.guard === undefined && this.#ends.stall === undefined) {
      // The common case, kept small: a success without a deadline or a stall detector to tell.
      const now = p.clock.now()
      const mark = this.#events.userCode
      const duration = now - ctx.startedAt
      p.metrics.recordHandler(duration)
      this.#ends.breakers?.record(m.type, false)
      this.#ends.outcomes.succeeded(m, duration, ctx.attempt, ctx.startedAt, now, value)
      this.#lastReading = now
      this.#lastReadingMark = mark
      return
    }
    if (!ok && (value === HANDED_BACK || isInstance(value, DuplicateSkip))) {
      this.#endUnrun(m, ctx, value === HANDED_BACK)
      return
    }
    this.#endGuarded(m, ctx, ok, value)
  }

  // An attempt that ran, with a deadline, a stall detector or a failure to handle.
  #endGuarded(m: Envelope, ctx: AttemptContext<M>, ok: boolean, value: unknown): void {
    const p = this.#p
    const now = p.clock.now()
    const mark = this.#events.userCode
    const duration = now - ctx.startedAt
    p.metrics.recordHandler(duration)
    const guard = ctx.guard
    if (guard?.isCurrent && !(ok ? guard.done(now) : guard.fail(now))) {
      // Settled after its deadline, before the late timer: a timeout (the watchdog counted it late).
      ok = false
      value = guard.signal.reason
    }
    this.#ends.stall?.progress()
    const timedOut = !ok && value instanceof HandlerTimeoutError
    if (timedOut) this.#compensate(m)
    // Any settle reports to the timeout breaker: only a timeout counts against it, anything else shows the
    // handler is not hanging (a half-open probe that fails fast closes it).
    this.#ends.breakers?.record(m.type, timedOut)
    const outcomes = this.#ends.outcomes
    if (ok) outcomes.succeeded(m, duration, ctx.attempt, ctx.startedAt, now, value)
    else {
      // Retry (an ordered one keeps the key) or dead-letter; runs user code (classifier, listeners),
      // during which this message is in transit: a stop() from there waits for it.
      outcomes.inTransit()
      try {
        this.#ends.failures.failed(m, ctx.attempt, ctx.startedAt, value, now)
      } finally {
        outcomes.landed()
      }
      outcomes.idleCheck()
    }
    this.#lastReading = now
    // A timeout's compensation hook and a failure's classifier are user code the count does not see.
    this.#lastReadingMark = timedOut || !ok ? NOT_REUSABLE : mark
  }

  late(_m: Envelope, ctx: AttemptContext<M>, ok: boolean): void {
    // Swallowed and counted once by the watchdog (`lateCompletions`); the outcome was recorded at the timeout.
    if (ok) ctx.guard?.done()
    else ctx.guard?.fail()
  }

  zombiesOver(count: number, zombies: AttemptContext<M>[]): void {
    const now = this.#p.clock.now()
    const summaries = zombies.map((ctx) => {
      const { epoch, label, ageMs } = ctx.describe(now)
      return { epoch, label, ageMs }
    })
    this.#p.events.emit('zombies', count, summaries)
  }

  waiting(): boolean {
    return this.#starts.queue.length > 0
  }

  saturated(attempts: AttemptContext<M>[], sinceMs: number, thresholdMs: number): void {
    const at = this.#p.clock.now()
    const running = attempts.map((ctx) => ctx.describe(at))
    this.#p.events.emit('stall', { kind: 'saturated', at, lagMs: 0, sinceProgressMs: sinceMs, thresholdMs, running })
  }

  /** Effects refused because their attempt had ended or was aborted (those without a watchdog guard). */
  fencedUnguarded = 0

  fenced(): void {
    this.fencedUnguarded++
  }

  /** `ctx.commit(checkpoint)`: only the attempt running now may commit (see `commit-point.ts`). */
  commit(m: Envelope, checkpoint: unknown, attempt: number, startedAt: number): void {
    commitPoint(this.#p, this.#ends, { m, checkpoint, attempt, startedAt })
  }

  /** The checkpoint of `m`'s last commit (`ctx.committed`). */
  checkpointOf(m: Envelope): unknown {
    return this.#p.records.extras.checkpointOf(m)
  }

  /** `ctx.post` / `ctx.tryPost`: a follow-up one hop further from the root. */
  postFollowUp<T extends MessageType<M>>(
    parent: Envelope,
    type: T,
    payload: M[T],
    options: PostOptions | undefined,
    mode: 'throw' | 'result',
  ): Message<M, T> | PostResult<M, T> {
    return this.#ends.entries.postFollowUp(parent, type, payload, options, mode)
  }

  /** The deadline of a message: per post, else per type, else the loop's — bounded for a breaker probe. */
  timeoutFor(m: Envelope): number {
    const { registry } = this.#p
    const extras = this.#p.records.extras
    const failures = this.#ends.failures
    const timeout = extras.timeoutOf(m) ?? registry.timeoutFor(m.type) ?? this.#starts.timeoutMs
    const probe = failures.probeTimeout(m)
    return probe === undefined ? timeout : Math.min(timeout, probe)
  }

  // An attempt that did not count: interrupted by the stop's deadline (handed back in the snapshot),
  // or skipped because an async idempotency store found its key taken (dropped as a duplicate).
  #endUnrun(m: Envelope, ctx: AttemptContext<M>, handedBack: boolean): void {
    const { outcomes, failures } = this.#ends
    if (ctx.guard?.isCurrent) ctx.guard.cancel(HANDED_BACK)
    if (handedBack) outcomes.snapshotted(m, 'running', undefined, true)
    else {
      failures.circuits.abandon(m) // a probe that never ran frees its probe slot
      outcomes.dropped(m, 'duplicate', true)
    }
    outcomes.idleCheck()
    this.#lastReadingMark = NOT_REUSABLE
  }

  // Counts a timeout, and runs the type's compensation hook once, under its own deadline.
  #compensate(m: Envelope): void {
    this.#p.metrics.timedOut++
    const hook = this.#p.registry.compensationFor(m.type)
    if (hook === undefined) return
    const report = (error: unknown) => this.#p.events.emit('compensated', m as unknown as Message<M>, error)
    compensate(
      m,
      hook,
      this.#ends.watchdog.guard({ timeoutMs: this.timeoutFor(m), label: m, onTimeout: (_a, e) => report(e) }),
      report,
    )
  }
}
