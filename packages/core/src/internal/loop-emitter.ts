/**
 * The loop's typed events (eventemitter3). Subscribe with `loop.events.on(name, listener)`.
 *
 * @module
 */

import { warnDeprecated } from '@flowing/errors'
import { EventEmitter } from 'eventemitter3'
import type { LoopEvents, PerMessageListening } from '../contracts/events.js'
import type { MessageMap } from '../contracts/message.js'

const RENAMED_BREAKER_EVENT = "The loop's `breaker` event is deprecated: listen to `timeout-breaker` (same arguments)."

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

  /**
   * How many times user code was entered under the loop: every listener call, plus each
   * {@link LoopEmitter.userCodeRan} mark (a logger, a route selector). A stage that keeps a clock
   * reading for reuse compares this count with the one at the reading — no stage threads a
   * "listeners ran" boolean back.
   * @internal
   */
  userCode = 0

  /**
   * Marks that user code other than a listener ran, or may have run (a message logger, route selectors).
   * @internal
   */
  userCodeRan(): void {
    this.userCode++
  }

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
    this.userCode++
    try {
      listener.fn.apply(listener.context, args)
    } catch (error) {
      rethrowLater(error)
    }
  }
}
