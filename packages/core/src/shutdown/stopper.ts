/**
 * The three exits (seed 000): a draining stop, a stop without drain, and a stop with a deadline or a
 * signal that hands back what it cannot finish. Every holder of messages gives them up the same way —
 * it hands over everything it holds, and each message gets its outcome (`cancelled`, or
 * `snapshotted`) from the outcomes stage:
 *
 * ```
 *   holders:  delayed (wheel) · backing off (wheel) · held (breakers) · queued · running (pool)
 *   drain: false  ─▶ each cancelled, running ones aborted
 *   cut-off       ─▶ each snapshotted, running ones aborted and fenced (their settle is ignored)
 * ```
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { FailureExitReport } from '../contracts/failures.js'
import type { MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { LoopSnapshot } from '../contracts/snapshot.js'
import type { StopOptions } from '../contracts/stop.js'
import { InvalidArgumentError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import * as check from '../internal/validate.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { Outcomes } from '../outcomes/outcomes.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import { HANDED_BACK } from '../pool/attempts.js'
import type { WorkerPool } from '../pool/worker-pool.js'
import type { DelayedPosts } from '../timers/delayed-posts.js'
import type { HandBack } from './hand-back.js'
import { type Holder, handOverAll } from './holders.js'

const STOP_KEYS = ['drain', 'deadlineMs', 'signal'] as const

/** What a stop shuts down besides the messages: background watchers, waiting producers, timers, the journal. */
export interface StopQuietPorts {
  readonly stall: { stop(): void } | undefined
  readonly gate: { stop(): void } | undefined
  /** Producers waiting for room are refused. */
  readonly pacing: { stop(): void }
  /** Pending alerts go out, breaker cooldown timers stop. */
  readonly failures: { flush(): void }
  /** The clock of timers a stopped loop may still hold: released once stopped. */
  readonly lingering: { release(): void }
  readonly journal: { close(): Promise<void> } | undefined
}

/** Where a stop finds the messages, and where it sends them. */
export interface StopWorkPorts<M extends MessageMap> {
  readonly delayed: Pick<DelayedPosts, 'takeAll' | 'clear'>
  /** Every stage that holds accepted messages outside the pool. */
  readonly holders: readonly Holder[]
  readonly pool: Pick<WorkerPool<AttemptContext<M>>, 'attempts' | 'detach'>
  readonly outcomes: Pick<Outcomes<M>, 'drain' | 'snapshotted' | 'cancelled' | 'idleCheck'>
  /** The snapshot being written, and its deadline. */
  readonly handBack: Pick<HandBack, 'arm' | 'disarm' | 'take'>
  /** Schedules the pool's pump. */
  schedulePump(): void
  /** Whether a delayed message is a schedule's next fire. */
  carries(m: Envelope): boolean
}

/** The stages a stop touches. */
export interface StopParts<M extends MessageMap> {
  readonly options: Pick<ResolvedLoopOptions, 'failureExit' | 'timeLimit'>
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly lifecycle: Lifecycle
  readonly quiets: StopQuietPorts
  readonly work: StopWorkPorts<M>
}

/** Runs `Loop.stop`: refuses new posts, drains or cancels, cuts off at the deadline, resolves the snapshot. */
export class Stopper<M extends MessageMap> {
  readonly #p: StopParts<M>
  // The stop's promise, shared by every call.
  #stopping: Promise<LoopSnapshot> | undefined
  // The `timeLimit` timer, armed at the first start.
  #timeLimit: TimerHandle | undefined
  // The stop's work is done and the loop is about to be `stopped`: nothing more to arm.
  #closing = false

  /** @param parts - the stages a stop touches */
  constructor(parts: StopParts<M>) {
    this.#p = parts
  }

  /** See `Loop.stop`. */
  stop(options?: StopOptions): Promise<LoopSnapshot> {
    const { drain, deadlineMs, signal } = check.readably('options', () => readStopOptions(options))
    const { lifecycle } = this.#p
    if (this.#stopping !== undefined) {
      if (lifecycle.state === 'stopped' || this.#closing) return this.#stopping
      if (!drain && lifecycle.draining) this.#escalate() // a graceful stop that ran out of patience
      this.#arm(deadlineMs, signal) // a shorter deadline, or a signal, may come later
      return this.#stopping
    }
    this.#p.quiets.stall?.stop()
    if (this.#timeLimit !== undefined) this.#p.clock.clearTimeout(this.#timeLimit)
    this.#p.quiets.gate?.stop()
    lifecycle.beginStop(drain, deadlineMs !== undefined || signal !== undefined)
    this.#p.quiets.pacing.stop()
    // Delayed messages stay on the wheel (cancellable, run if due) while a stop that hands back, or a
    // draining stop of a loop with a journal, drains; what is left is handed back at its end. A
    // schedule's next fire goes at once: each fire would post another, and the drain would not end.
    if (drain && !this.#keepsDelayed()) this.#cancelDelayed()
    else if (drain) this.#handBackDelayed(this.#p.work.carries)
    if (!drain) this.#escalate()
    this.#p.work.schedulePump()
    this.#stopping = this.#p.work.outcomes
      .drain()
      .then(() => this.#finish())
      .then((snapshot) => this.#closeJournal(snapshot))
    this.#arm(deadlineMs, signal)
    return this.#stopping
  }

  /** The failure exit: stop at once with its deadline, and deliver the snapshot. */
  failureExit(report: FailureExitReport): void {
    const exit = this.#p.options.failureExit
    if (exit === false) return
    this.#p.events.emit('failure-exit', report)
    // Called once the failing attempt's bookkeeping (retry or dead letter) is done, so its retry is
    // handed back too; at once, before the pump can start anything else.
    const stopping = this.stop({ deadlineMs: exit.deadlineMs ?? 0 })
    const deliver = exit.onSnapshot
    if (deliver !== undefined) this.#deliver(stopping, (snapshot) => deliver(snapshot, report))
  }

  /** Arms the `timeLimit` option's timer (once, at the first start; cleared by any stop). */
  armTimeLimit(): void {
    const limit = this.#p.options.timeLimit
    if (limit === false || this.#timeLimit !== undefined || this.#stopping !== undefined) return
    const { clock, events } = this.#p
    const startedAt = clock.now()
    this.#timeLimit = clock.setTimeout(() => {
      events.emit('time-limit', { maxRunMs: limit.maxRunMs, ranMs: clock.now() - startedAt })
      const stopping = this.stop({ deadlineMs: limit.deadlineMs ?? 0 })
      const deliver = limit.onSnapshot
      if (deliver !== undefined) this.#deliver(stopping, deliver)
    }, limit.maxRunMs)
  }

  // Hands a stop's snapshot to a user callback; what it throws is reported, never in the stop's way.
  #deliver(stopping: Promise<LoopSnapshot>, deliver: (snapshot: LoopSnapshot) => unknown): void {
    stopping.then(deliver).then(undefined, (error: unknown) => {
      queueMicrotask(() => {
        throw error
      })
    })
  }

  #finish(): LoopSnapshot {
    const { lifecycle, events } = this.#p
    const { failures } = this.#p.quiets
    this.#closing = true // listeners of `drained` and late alerts may call stop(): nothing to arm
    this.#p.work.handBack.disarm()
    if (this.#keepsDelayed()) this.#handBackDelayed()
    if (lifecycle.draining) events.emit('drained')
    failures.flush() // pending alerts go out; breaker cooldown timers stop
    lifecycle.stopped()
    this.#p.quiets.lingering.release() // a zombie's grace timer, a compensation deadline: none keeps the process alive
    return this.#p.work.handBack.take()
  }

  // The journal's last batch (what the stop handed back stays in it), then the store closes.
  async #closeJournal(snapshot: LoopSnapshot): Promise<LoopSnapshot> {
    await this.#p.quiets.journal?.close()
    return snapshot
  }

  #arm(deadlineMs: number | undefined, signal: AbortSignal | undefined): void {
    if (deadlineMs !== undefined || signal !== undefined) this.#p.lifecycle.handBack()
    this.#p.work.handBack.arm(deadlineMs, signal)
  }

  /**
   * The cut-off (the hand-back's deadline passed, or its signal aborted): everything unfinished is
   * handed back — backing off, held, delayed, waiting — and what still runs is aborted (its signal
   * fires, its late effects are fenced, its late settle ignored).
   */
  cutOff(): void {
    const { lifecycle } = this.#p
    const { holders, outcomes, pool } = this.#p.work
    lifecycle.cutOff()
    for (const h of handOverAll(holders)) outcomes.snapshotted(h.m, h.state, h.dueAt)
    for (const ctx of pool.attempts()) {
      ctx.abort(true)
      pool.detach((a) => a === ctx, HANDED_BACK, false)
    }
    outcomes.idleCheck()
  }

  // Whether the delayed messages not yet due go to the snapshot (and the journal) rather than being cancelled.
  #keepsDelayed(): boolean {
    const { lifecycle } = this.#p
    return lifecycle.handsBack || (lifecycle.draining && this.#p.quiets.journal !== undefined)
  }

  // At the end of a stop that keeps them: delayed messages not yet due go to the snapshot.
  #handBackDelayed(only?: (m: Envelope) => boolean): void {
    for (const { m, dueAt } of this.#p.work.delayed.takeAll(false, only))
      this.#p.work.outcomes.snapshotted(m, 'delayed', dueAt)
  }

  // A draining stop: delayed messages not yet due never run; overdue ones are part of the drain.
  #cancelDelayed(): void {
    for (const m of this.#p.work.delayed.clear(false)) this.#p.work.outcomes.cancelled(m)
  }

  // A stop without drain (or one that escalated): every holder's messages are cancelled, running
  // handlers' signals abort.
  #escalate(): void {
    const { lifecycle } = this.#p
    const { holders, outcomes, pool } = this.#p.work
    if (this.#keepsDelayed()) this.#handBackDelayed() // a stop that hands back keeps them, escalated or not
    lifecycle.escalate()
    for (const h of handOverAll(holders)) outcomes.cancelled(h.m)
    for (const ctx of pool.attempts()) ctx.abort()
    outcomes.idleCheck()
  }
}

// Validates `stop()`'s options: unknown keys and wrong shapes are refused (a typo such as
// `{ deadline: 20_000 }` would otherwise leave the shutdown without a deadline).
function readStopOptions(options: StopOptions | undefined): {
  drain: boolean
  deadlineMs: number | undefined
  signal: AbortSignalLike | undefined
} {
  if (options === undefined) return { drain: true, deadlineMs: undefined, signal: undefined }
  const o = check.snapshotOptions('options', options) as StopOptions
  check.knownKeys('options', o as Record<string, unknown>, STOP_KEYS)
  const drain = o.drain === undefined ? true : check.boolean('options.drain', o.drain)
  const deadlineMs =
    o.deadlineMs === undefined ? undefined : check.nonNegativeNumber('options.deadlineMs', o.deadlineMs, true)
  const signal = o.signal
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new InvalidArgumentError('options.signal', 'an AbortSignal', signal)
  }
  return { drain, deadlineMs, signal }
}

// `instanceof` that cannot throw (a Proxy's getPrototypeOf trap may): a value it cannot check is not one.
function isAbortSignal(value: unknown): value is AbortSignal {
  try {
    return value instanceof AbortSignal
  } catch {
    return false
  }
}
