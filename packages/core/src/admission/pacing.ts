/**
 * Pacing producers: `send()` waits for room under the `wait` policy, `desiredSize` and `ready` tell
 * paced producers when to post. When a slot frees, it goes first to delayed messages that came due
 * while the queue was full (they were accepted: they may not vanish), then to producers waiting in
 * `send()` (by priority, then arrival — exactly one per slot), and `ready` opens once there is room.
 *
 * @module
 */
import type { PressureTransition } from '@flowing/backpressure'
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { Message, MessageMap, MessageType, SendOptions } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { Registry } from '../dispatcher/registry.js'
import { LoopStoppingError, QueueFullError, SendAbortedError } from '../errors.js'
import type { Origin } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import * as check from '../internal/validate.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { DelayedPosts } from '../timers/delayed-posts.js'
import type { Admission } from './admission.js'
import { checkPostOptions } from './post-options.js'
import type { LoopPressure } from './pressure.js'
import { SendGate } from './send-gate.js'

const RESOLVED = Promise.resolve()

// Promise.withResolvers arrived in Node 22; this is the same for Node 20.
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** The room pacing hands out: the queue's length, the pressure gauge, overdue delayed messages. */
export interface PacingRoomPorts {
  readonly queue: Pick<RunQueue, 'length'>
  readonly pressure: LoopPressure | undefined
  readonly delayed: Pick<DelayedPosts, 'overdue' | 'admitOverdue'>
}

/** The stages pacing touches. */
export interface PacingParts<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly lifecycle: Pick<Lifecycle, 'stopping' | 'admitsRoots'>
  readonly registry: Pick<Registry<M>, 'resolve'>
  /** Where waiting producers and overdue messages enter. */
  readonly admission: Pick<Admission<M>, 'admit' | 'enterOverdue' | 'load' | 'refused' | 'stamping'>
  readonly room: PacingRoomPorts
}

/** Who gets the room that frees up: overdue delayed messages, waiting producers, paced producers. */
export class Pacing<M extends MessageMap> {
  readonly #p: PacingParts<M>
  readonly #gate: SendGate<M>
  // The shared promise behind `ready` while the loop is congested.
  #readyGate: { promise: Promise<void>; resolve: () => void } | undefined
  // The one timer that re-checks waiting producers when an open admission breaker cools down.
  #breakerWake: TimerHandle | undefined

  /** @param parts - the stages pacing touches */
  constructor(parts: PacingParts<M>) {
    this.#p = parts
    const { admission } = parts
    this.#gate = new SendGate<M>(
      parts.clock,
      (w) => admission.admit(w.type, w.payload, w.options, true, w.origin),
      (type, error) => admission.refused(type, error),
    )
  }

  /** Producers waiting in `send()`. */
  get waiting(): number {
    return this.#gate.length
  }

  /** See `Loop.send`; `posted` was counted. */
  send<T extends MessageType<M>>(type: T, payload: M[T], options: SendOptions | undefined): Promise<Message<M, T>> {
    const { admission, lifecycle, options: o } = this.#p
    const { queue, pressure } = this.#p.room
    let origin: Origin | undefined
    try {
      checkPostOptions(options, true)
      origin = admission.stamping.originOf(type, options, undefined) // stamped now, in the sender's context
      // An already-aborted signal means "do not send", whether or not there is room (AbortSignal convention).
      if (options?.signal?.aborted) throw new SendAbortedError(type, options.signal.reason)
      if (this.#gate.length >= o.maxWaiting) throw new QueueFullError(type, admission.load())
      const priority = options?.priority ?? o.defaultPriority
      const wait =
        (options?.overflow ?? o.overflow) === 'wait' &&
        lifecycle.admitsRoots &&
        (queue.length >= o.capacity || !(pressure?.admits(priority, queue.length) ?? true))
      if (wait) {
        this.#p.registry.resolve(type) // refuse unknown types now, not after the wait
        const waiting = this.#gate.wait(type, payload, options, priority, admission.load(), origin) as Promise<
          Message<M, T>
        >
        this.#armBreakerWake()
        return waiting
      }
    } catch (error) {
      const typed = check.typedError('options', error, options) // a throwing getter or Proxy trap: typed
      admission.refused(type, typed)
      return Promise.reject(typed)
    }
    try {
      return Promise.resolve(admission.admit(type, payload, options, true, origin) as Message<M, T>)
    } catch (error) {
      return Promise.reject(error) // admission counted the refusal
    }
  }

  /** See `Loop.desiredSize`. */
  get desiredSize(): number {
    const { options } = this.#p
    const { pressure, queue } = this.#p.room
    if (pressure === undefined) return options.capacity - queue.length
    return pressure.desiredSize(queue.length, options.defaultPriority)
  }

  /** See `Loop.ready`. */
  get ready(): Promise<void> {
    if (this.desiredSize > 0 || this.#p.lifecycle.stopping) return RESOLVED
    this.#readyGate ??= deferred()
    this.#armBreakerWake()
    return this.#readyGate.promise
  }

  /**
   * A message left the queue (a worker took it): its slot goes to whoever waits for one (overdue
   * delayed messages, then producers waiting in `send()`).
   */
  roomFreed(): void {
    const p = this.#p
    p.room.pressure?.update(p.room.queue.length)
    if (this.#readyGate === undefined && p.room.delayed.overdue === 0 && this.#gate.length === 0) return
    const { admission, options, events } = p
    const { queue, delayed } = p.room
    if (this.#readyGate !== undefined && this.desiredSize > 0) this.#openReadyGate()
    if (delayed.overdue > 0) {
      delayed.admitOverdue(
        () => queue.length < options.capacity,
        (due) => admission.enterOverdue(due),
      )
    }
    if (this.#gate.length > 0) {
      events.userCodeRan() // admission may run route selectors
      this.#gate.admitWhile(this.#canAdmitWaiter)
    }
  }

  /** One event per level crossing; falling back below the shed mark wakes paced producers. */
  onPressure(transition: PressureTransition): void {
    this.#p.events.emit('backpressure', transition)
    this.#recheckWaiting()
  }

  /** The loop stops: waiting producers are refused, paced ones released, the wake-up timer cleared. */
  stop(): void {
    this.#openReadyGate()
    if (this.#breakerWake !== undefined) this.#p.clock.clearTimeout(this.#breakerWake)
    this.#breakerWake = undefined
    this.#gate.rejectAll((w) => new LoopStoppingError(`send \`${w.type}\``))
  }

  // A producer waiting in send() may enter: room, and backpressure would admit its priority.
  readonly #canAdmitWaiter = (priority: number): boolean => {
    const { options } = this.#p
    const { queue, pressure } = this.#p.room
    return queue.length < options.capacity && (pressure?.admits(priority, queue.length) ?? true)
  }

  // An open admission breaker reopens by time, not by queue activity: when producers wait on it (in
  // send() or on `ready`), one timer re-checks them when its cooldown ends. Once the cooldown is over
  // and it is still open, the fill holds it: the level leaving `reject` re-checks them (no timer, which
  // would spin at 0 ms until the queue drains).
  #armBreakerWake(): void {
    const left = this.#p.room.pressure?.breakerCooldownLeft
    if (left === undefined || left <= 0 || this.#breakerWake !== undefined) return
    if (this.#gate.length === 0 && this.#readyGate === undefined) return
    this.#breakerWake = this.#p.clock.setTimeout(() => {
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
}
