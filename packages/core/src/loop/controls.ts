/**
 * `loop.controls`: an operator's — or another process's — hands on a loop's flow control.
 *
 * @module
 */
import type { MessageMap, MessageType } from '../contracts/message.js'
import type { Engine } from '../engine/engine.js'
import { InvalidArgumentError } from '../errors.js'
import { forceCircuit } from '../failure/circuit-controls.js'
import * as check from '../internal/validate.js'

// The longest pause another process can ask for.
const DAY_MS = 86_400_000

/**
 * Forces circuit breakers, pauses message types and routes, and shares rate limits: `loop.controls`. `@flowing/nats` uses it to make the
 * processes of one loop act as one on a shared downstream.
 *
 * @group Loop
 */
export class LoopControls<M extends MessageMap = MessageMap> {
  readonly #e: Engine<M>

  /** @internal Use `loop.controls`. */
  constructor(engine: Engine<M>) {
    this.#e = engine
  }

  /**
   * Opens the breaker of `type` — of its route `routeKey` with `per: 'route'` — whatever its counts
   * say: the messages it covers wait, held, until it half-opens after `cooldownMs` (the breaker's own
   * by default) and its probes succeed. For a maintenance window, or to follow the breaker of another
   * process on the same downstream. Emits `circuit` with reason `forced`; a breaker already open stays
   * as it is.
   *
   * @throws InvalidArgumentError when `type` has no breaker, or for bad options; nothing changes then
   */
  openCircuit(type: MessageType<M>, options?: { readonly routeKey?: string; readonly cooldownMs?: number }): this {
    forceCircuit(this.#e.failures.circuits, type, options, true)
    return this
  }

  /**
   * Closes the breaker of `type` (of its route `routeKey`) whatever its counts say: what it held goes
   * back to the queue in its order. Emits `circuit` with reason `forced`; a closed breaker stays as it
   * is.
   *
   * @throws InvalidArgumentError when `type` has no breaker, or for bad options; nothing changes then
   */
  closeCircuit(type: MessageType<M>, options?: { readonly routeKey?: string }): this {
    forceCircuit(this.#e.failures.circuits, type, options, false)
    return this
  }

  /**
   * Pauses `type`: its messages are still admitted (posts succeed and count as usual), but none
   * starts — each waits at its place, held as by an open circuit breaker, until
   * {@link LoopControls.resumeType}. A held message keeps its key, so later messages of that key, of
   * any type, wait behind it (per-key order); other keys and types keep flowing. Attempts already running finish. Held messages count in the
   * `held` gauge, show as `held` in `loop.inspect()` and in their trace (detail `paused`), can be
   * cancelled, and a stop hands them back as a breaker's are — but a draining stop waits for them:
   * resume the type first, or give the stop a deadline. No event is emitted (the operator knows).
   * Pausing a paused type does nothing.
   *
   * @throws InvalidArgumentError when `type` is not a non-empty string, UnknownMessageTypeError when no
   *   handler is registered for it (as `openCircuit`); nothing changes then
   */
  pauseType(type: MessageType<M>): this {
    this.#e.failures.holds.pause(this.#registered(type))
    return this
  }

  /**
   * Resumes a type paused by {@link LoopControls.pauseType}: what the pause held goes back to the
   * queue in its order (priority, then post order), each message still holding its key. Resuming a
   * type that is not paused does nothing.
   *
   * @throws InvalidArgumentError when `type` is not a non-empty string, UnknownMessageTypeError when no
   *   handler is registered for it (as `openCircuit`); nothing changes then
   */
  resumeType(type: MessageType<M>): this {
    this.#e.failures.holds.pauses.resume(this.#registered(type))
    return this
  }

  /** The types paused now by {@link LoopControls.pauseType}, in the order they were paused (a new array). */
  pausedTypes(): MessageType<M>[] {
    return this.#e.failures.holds.pauses.types() as MessageType<M>[]
  }

  /**
   * Divides the rate limits among `processes` that share their downstreams: every budget but those
   * per key allows ⌊max / processes⌋ starts per window (at least one), so together they stay within
   * `max` while `max ≥ processes`. `1` undoes it.
   *
   * @throws InvalidArgumentError unless `processes` is a positive integer
   */
  shareRateLimits(processes: number): this {
    this.#e.limits.share(check.positiveInteger('processes', processes, 65_536), this.#e.clock.now())
    return this
  }

  /**
   * Pauses the route of `type` (its route `routeKey`, for a type routed by key) for `retryAfterMs`,
   * then throttles it (slow start), as a handler's `RateLimitError` of scope `route` would — without
   * a message of its own: for a "too many requests" another process of the loop received from the
   * same downstream. Messages of the route wait at their start (a `rate-limited` event each, scope
   * `retry-after`); running ones finish. A longer pause already in place stays. Emits nothing itself.
   *
   * @throws InvalidArgumentError for a bad `type`, `routeKey` or `retryAfterMs` (a positive finite
   *   number of ms, at most 24 h), UnknownMessageTypeError when no handler is registered for `type`;
   *   nothing changes then
   */
  pauseRoute(type: MessageType<M>, options: { readonly routeKey?: string; readonly retryAfterMs: number }): this {
    const o: { readonly routeKey?: unknown; readonly retryAfterMs?: unknown } = check.snapshotOptions(
      'options',
      options,
    )
    check.knownKeys('pauseRoute() options', o, ['routeKey', 'retryAfterMs'])
    const ms = check.positiveMs('options.retryAfterMs', o.retryAfterMs, DAY_MS)
    const { routeKey } = o
    if (routeKey !== undefined && typeof routeKey !== 'string') {
      throw new InvalidArgumentError('options.routeKey', 'a string', routeKey)
    }
    const route = this.#registered(type)
    this.#e.limits.pause(routeKey === undefined ? route : `${route}/${routeKey}`, ms, this.#e.clock.now())
    return this
  }

  // As openCircuit: a non-string is a bad argument, an unregistered string an unknown type.
  #registered(type: string): string {
    this.#e.registry.resolve(type)
    return type
  }
}
