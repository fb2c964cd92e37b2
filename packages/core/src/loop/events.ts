/**
 * The loop's typed events (eventemitter3). Subscribe with `loop.events.on(name, listener)`.
 *
 * @module
 */
import type { PressureTransition } from '@flowing/backpressure'
import type { StallReport } from '@flowing/watchdog'
import type { FinishedSummary } from '../engine/finished.js'
import type { StoreError } from '../errors.js'
import type { DeadLetterAlert } from '../failure/alerts.js'
import type { CircuitChange } from '../failure/circuits.js'
import type { ErrorInfo } from '../failure/classify.js'
import type { DeadLetter } from '../failure/dead-letters.js'
import type { AttemptFailure, FailureExitReport, RetryScheduled } from '../failure/failure-types.js'
import type { GateChange } from '../limits/dispatch-gate.js'
import type { RateLimitHold } from '../limits/rate-limits.js'
import type { WorkersChange } from '../pool/autoscaler.js'
import type { BreakerChange } from '../pool/timeout-breakers.js'

/** A zombie as the `zombies` event lists it. @group Timeouts and stalls */
export interface ZombieSummary {
  /** The attempt's epoch. */
  readonly epoch: number
  /** What ran: type, key, id. */
  readonly label: string
  /** How long since it started (ms). */
  readonly ageMs: number
}

import { warnDeprecated } from '@flowing/errors'
import { EventEmitter } from 'eventemitter3'
import type { Message, MessageMap } from '../message.js'

const RENAMED_BREAKER_EVENT = "The loop's `breaker` event is deprecated: listen to `timeout-breaker` (same arguments)."

/**
 * What the `time-limit` event reports.
 *
 * @group Flow control
 * @category Boundaries
 */
export interface TimeLimitReport {
  /** The limit (ms). */
  readonly maxRunMs: number
  /** How long the loop ran since its first `start()` (ms). */
  readonly ranMs: number
}

/** Lifecycle states: created → running ⇄ paused → draining → stopped. @group Loop */
export type LoopState = 'created' | 'running' | 'paused' | 'draining' | 'stopped'

/** Why a message was dropped. @group Events */
export type DropReason = 'drop-new' | 'drop-oldest-lowest' | 'duplicate'

/**
 * Event names and listener arguments: each member is an event, and its tuple names the listener's
 * arguments in order — `succeeded: [message, durationMs]` is `loop.events.on('succeeded', (message, durationMs) => …)`.
 *
 * @typeParam M - the message map
 * @group Events
 */
export interface LoopEvents<M extends MessageMap = MessageMap> {
  /** A message entered the queue (a delayed one when it became due). */
  posted: [message: Message<M>]
  /** A delayed message was accepted onto the timing wheel (`postDelayed` / `postAt`). */
  scheduled: [message: Message<M>, dueAt: number]
  /** A post was refused (the caller got the same error). */
  rejected: [type: string, error: Error]
  /** A handler started. */
  started: [message: Message<M>]
  /** A handler returned or resolved. */
  succeeded: [message: Message<M>, durationMs: number]
  /** An attempt threw, rejected or timed out; `failure.next` says whether a retry or the dead-letter store follows. */
  failed: [message: Message<M>, error: unknown, failure: AttemptFailure]
  /** A failed message was scheduled for another attempt after a back-off (on the timing wheel). */
  retrying: [message: Message<M>, retry: RetryScheduled]
  /** A retry's back-off ended: the message is back in the queue. */
  requeued: [message: Message<M>, attempt: number]
  /** The outcome `dead-lettered`: the message failed for good (non-retryable, or out of attempts). */
  'dead-lettered': [message: Message<M>, letter: DeadLetter]
  /** A message reached the front while its route's circuit breaker was open: it waits in the queue. */
  held: [message: Message<M>, route: string]
  /** A route's circuit breaker changed state. */
  circuit: [change: CircuitChange]
  /**
   * A message waits for a rate limit: a budget is full, or its handler threw `RateLimitError` and its
   * route pauses. It stays in the queue (no worker held, its key kept) until `hold.until`.
   */
  'rate-limited': [message: Message<M>, hold: RateLimitHold]
  /** The resource gate (`gate` option) closed — nothing starts — or opened again. */
  gate: [change: GateChange]
  /** The `timeLimit` ran out: the loop stops, handing back what is left. */
  'time-limit': [report: TimeLimitReport]
  /** A de-noised dead-letter alert (at most one per type per window). */
  alert: [alert: DeadLetterAlert]
  /** A dead letter with an error signature not seen before for its type (logged once). */
  signature: [type: string, error: ErrorInfo, message: Message<M>]
  /** The dead-letter sink threw or rejected for a letter (the letter is still in the memory store). */
  'sink-error': [error: unknown, letter: DeadLetter]
  /** A post was refused because its idempotency key is in flight or done (a `rejected` event fires too). */
  duplicate: [type: string, idempotencyKey: string, ledgerState: string]
  /** A handler marked its commit point (`ctx.commit()`): the side effect is done, the message not yet. */
  committed: [message: Message<M>, checkpoint: unknown]
  /** An idempotency store call (`set`, `release`, a claim) threw or rejected. */
  'ledger-error': [error: unknown, idempotencyKey: string]
  /**
   * A journal store failed (a commit, the final close, a takeover): posts are refused with the error
   * until a commit succeeds again; nothing accepted is lost.
   */
  'store-error': [error: StoreError]
  /** A commit succeeded again after a `store-error`: posts are accepted again. */
  'store-recovered': [store: string]
  /** `restore()` re-admitted a snapshot's messages. */
  restored: [count: number, skipped: number]
  /** The failure rate passed the `failureExit` threshold: the loop stops, handing back what is left. */
  'failure-exit': [report: FailureExitReport]
  /** An overflow policy dropped a message (or, with an async idempotency store, it was a duplicate). */
  dropped: [message: Message<M>, reason: DropReason]
  /** A message was cancelled: queued ones by `stop({ drain: false })`, delayed ones by their handle or by `stop()`. */
  cancelled: [message: Message<M>]
  /** Queue empty and nothing running (fired on each transition to idle). */
  idle: []
  /** A draining `stop()` finished its work (just before the state becomes `stopped`). */
  drained: []
  /** Watermark backpressure changed level (one event per crossing; `backpressure` option). */
  backpressure: [transition: PressureTransition]
  /** A compensation hook finished after a timeout (`error` when it threw, rejected or timed out). */
  compensated: [message: Message<M>, error: unknown]
  /** The stall detector saw the event loop blocked, or no progress while work waits (`stall` option). */
  stall: [report: StallReport]
  /** More zombies than `maxZombies` (timed-out handlers still running past `graceMs`): once per crossing. */
  zombies: [count: number, zombies: readonly ZombieSummary[]]
  /** A type's timeout breaker changed state (see the `timeoutBreaker` option). */
  'timeout-breaker': [change: BreakerChange]
  /**
   * The old name of `timeout-breaker`, still emitted beside it (subscribing warns once per process).
   * @deprecated Listen to `timeout-breaker`.
   */
  breaker: [change: BreakerChange]
  /**
   * A message ended, whatever its outcome (`succeeded`, `dead-lettered`, `dropped`, `cancelled`,
   * `snapshotted`): its last event, after the outcome's own. `summary` tells how: attempts, queue wait,
   * run time, time from entering the queue to the outcome.
   */
  finished: [message: Message<M>, summary: FinishedSummary]
  /** The lifecycle state changed. */
  state: [state: LoopState, previous: LoopState]
  /** The worker count changed: the autoscaler (`workers: { min, max }`) or `loop.resize()`. */
  workers: [change: WorkersChange]
}

/** @internal Whether the per-message events have listeners (`LoopEmitter.hears`). */
export interface PerMessageListening {
  /** `posted` has listeners. */
  readonly posted: boolean
  /** `started` has listeners. */
  readonly started: boolean
  /** `succeeded` has listeners. */
  readonly succeeded: boolean
  /** `finished` has listeners. */
  readonly finished: boolean
}

// eventemitter3's listener record (its `EE`), which its own `emit` walks: the isolating path below
// walks it the same way, so `once`, `context` and removal during an emit behave exactly as upstream.
interface ListenerRecord {
  readonly fn: (...args: unknown[]) => unknown
  readonly context: unknown
  readonly once: boolean
}

// Where eventemitter3 keeps them: one record per event name, or an array once there are several.
interface Internals {
  readonly _events: Record<string, ListenerRecord | readonly ListenerRecord[] | undefined>
}

/**
 * Reports a listener's error without unwinding the emit: re-thrown, untouched, on a fresh microtask.
 * @internal
 */
export function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error // as a throwing listener's with Node's own emitter: uncaught, never in the loop's way
  })
}

/**
 * The loop's emitter: eventemitter3, with each listener isolated from the others.
 *
 * @remarks
 * **Isolation.** Every listener of an event runs, in registration order, even if an earlier one
 * throws: a buggy alert hook must not silently stop a metrics exporter registered after it. Each
 * listener error is reported once, asynchronously — re-thrown from a `queueMicrotask`, so it surfaces
 * as an uncaught exception (`process.on('uncaughtException')`, or a failed test), as with Node's own
 * emitter — and never inspected, so a thrown `Object.create(null)` or a hostile `Proxy` is passed on
 * as it is. `emit` itself returns normally: the loop's bookkeeping (an outcome half-recorded, a drain
 * that never resolves) is never cut short by user code.
 *
 * **Cost.** As eventemitter3's own `emit`: one property read when nobody listens, then one call per
 * listener, each inside a `try` (free in V8 until something throws). It walks eventemitter3's
 * listener records (`_events`, the one internal relied on, at the version pinned in package.json),
 * the way upstream does: `once`, `context`, and listeners added or removed during an emit behave
 * exactly as there — the tests pin it.
 * @group Events
 */
export class LoopEmitter<M extends MessageMap = MessageMap> extends EventEmitter<LoopEvents<M>> {
  /** Emits to every listener, each isolated; a listener's error is re-thrown asynchronously. */
  override emit<T extends EventEmitter.EventNames<LoopEvents<M>>>(
    event: T,
    ...args: EventEmitter.EventArgs<LoopEvents<M>, T>
  ): boolean {
    const key = EventEmitter.prefixed ? `${EventEmitter.prefixed}${event}` : event
    const listeners = (this as unknown as Internals)._events[key]
    if (listeners === undefined) return false
    if ('fn' in listeners) this.#call(event, listeners, args)
    else {
      // A snapshot for this emit: removal replaces the array; `length` is read once, so a listener
      // added meanwhile waits for the next emit (both as in eventemitter3's own loop).
      const length = listeners.length
      for (let i = 0; i < length; i++) this.#call(event, listeners[i] as ListenerRecord, args)
    }
    return true
  }

  /**
   * Whether `event` has listeners. The loop asks before emitting per-message events (`posted`,
   * `started`, `succeeded`), so a loop nobody listens to builds no argument array per message.
   */
  heard(event: EventEmitter.EventNames<LoopEvents<M>>): boolean {
    const key = EventEmitter.prefixed ? `${EventEmitter.prefixed}${event}` : event
    return (this as unknown as Internals)._events[key] !== undefined
  }

  /**
   * {@link LoopEmitter.heard} of the per-message events, as plain fields kept up to date by every
   * subscription change: one property read per message instead of a dictionary lookup.
   * @internal The loop's stages read it; use {@link LoopEmitter.heard}.
   */
  readonly hears: PerMessageListening = { posted: false, started: false, succeeded: false, finished: false }

  override on<T extends EventEmitter.EventNames<LoopEvents<M>>>(
    event: T,
    fn: EventEmitter.EventListener<LoopEvents<M>, T>,
    context?: unknown,
  ): this {
    super.on(event, fn, context)
    return this.#changed(event)
  }

  override addListener<T extends EventEmitter.EventNames<LoopEvents<M>>>(
    event: T,
    fn: EventEmitter.EventListener<LoopEvents<M>, T>,
    context?: unknown,
  ): this {
    super.addListener(event, fn, context)
    return this.#changed(event)
  }

  override once<T extends EventEmitter.EventNames<LoopEvents<M>>>(
    event: T,
    fn: EventEmitter.EventListener<LoopEvents<M>, T>,
    context?: unknown,
  ): this {
    super.once(event, fn, context)
    return this.#changed(event)
  }

  override removeListener<T extends EventEmitter.EventNames<LoopEvents<M>>>(
    event: T,
    fn?: EventEmitter.EventListener<LoopEvents<M>, T>,
    context?: unknown,
    once?: boolean,
  ): this {
    super.removeListener(event, fn, context, once)
    return this.#changed()
  }

  override off<T extends EventEmitter.EventNames<LoopEvents<M>>>(
    event: T,
    fn?: EventEmitter.EventListener<LoopEvents<M>, T>,
    context?: unknown,
    once?: boolean,
  ): this {
    super.off(event, fn, context, once)
    return this.#changed()
  }

  override removeAllListeners(event?: EventEmitter.EventNames<LoopEvents<M>>): this {
    super.removeAllListeners(event)
    return this.#changed()
  }

  // The one writer of `hears`: after every subscription change (`added`: the event subscribed to).
  #changed(added?: EventEmitter.EventNames<LoopEvents<M>>): this {
    if (added === 'breaker') warnDeprecated('FLOWING_DEP_BREAKER_EVENT', RENAMED_BREAKER_EVENT)
    const hears = this.hears as { -readonly [K in keyof PerMessageListening]: boolean }
    hears.posted = this.heard('posted')
    hears.started = this.heard('started')
    hears.succeeded = this.heard('succeeded')
    hears.finished = this.heard('finished')
    return this
  }

  #call(event: EventEmitter.EventNames<LoopEvents<M>>, listener: ListenerRecord, args: unknown[]): void {
    if (listener.once) this.removeListener(event, listener.fn as never, undefined, true)
    try {
      listener.fn.apply(listener.context, args)
    } catch (error) {
      rethrowLater(error)
    }
  }
}
