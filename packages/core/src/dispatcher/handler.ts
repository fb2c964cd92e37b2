/**
 * What user code looks like to the loop: handlers, middleware and the context they receive.
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'
import type { CircuitBreakerOptions } from '../contracts/failures.js'
import type { RateLimit } from '../contracts/flow.js'
import type { Message, MessageMap, MessageType, PostOptions, PostResult } from '../contracts/message.js'
import type { RetryOptions } from '../contracts/retry.js'

/**
 * What a handler can see and do during one attempt.
 *
 * @typeParam M - the message map (follow-up posts are type-checked against it)
 *
 * @group Handlers
 */
export interface HandlerContext<M extends MessageMap = MessageMap> {
  /** The message being handled. */
  readonly message: Message<M>
  /** 1 for the first attempt, 2 for the first retry. */
  readonly attempt: number
  /** Clock time (ms) when this attempt started. */
  readonly startedAt: number
  /**
   * Aborted when the loop stops without draining (reason: `LoopAbortedError`). Created lazily: a
   * handler that never reads it costs no `AbortController`.
   */
  readonly signal: AbortSignalLike
  /**
   * Reports progress: pushes the attempt's heartbeat deadline (`heartbeatMs`) forward — a field
   * write, O(1). The hard deadline (`timeoutMs`) never moves. No-op without a deadline.
   * @returns false when the attempt already lost the race (timed out, cancelled)
   */
  heartbeat(): boolean
  /**
   * Marks the point after which this message's side effect is done ("succeeded but not acknowledged"):
   * the ledger records the key as `committed` with `checkpoint`, and if what follows fails, later
   * attempts — in this process or after a restore — see it in {@link HandlerContext.committed} and
   * resume after the commit point instead of redoing the side effect. Fenced for an attempt that already
   * lost its race (timed out, aborted by a stop).
   *
   * @param checkpoint - JSON-serializable data the resumed attempt needs (e.g. the charge id); `true` if omitted
   * @throws FencedError from a timed-out or aborted attempt
   */
  commit(checkpoint?: unknown): void
  /**
   * The checkpoint of the message's last `commit()` (in any attempt, before a restart too), or
   * `undefined` when nothing was committed yet.
   *
   * @example
   * ```ts no-run
   * loop.on('order.paid', async (msg, ctx) => {
   *   if (ctx.committed === undefined) ctx.commit({ chargeId: await charge(msg.payload) })
   *   await sendReceipt(msg.payload, ctx.committed) // a retry resumes here
   * })
   * ```
   */
  readonly committed: unknown
  /**
   * Posts a follow-up message that carries this message's trace id and one more hop.
   *
   * @throws `HopLimitError` past the loop's `maxHops`, and everything `loop.post` throws
   */
  post<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): Message<M, T>
  /** Like {@link HandlerContext.post} but returns a result instead of throwing on overload. */
  tryPost<T extends MessageType<M>>(type: T, payload: M[T], options?: PostOptions): PostResult<M, T>
}

/**
 * Handles one message type (or one route of it). May be sync or async; a throw or a rejection fails
 * only this message. What it returns (or resolves to) is what `loop.request()` resolves with.
 *
 * @typeParam M - the message map
 * @typeParam T - the message type
 * @typeParam Result - what it must return: its type's entry in the loop's {@link ResultMap}, `unknown`
 * (anything) without one
 *
 * @group Handlers
 */
export type Handler<M extends MessageMap, T extends MessageType<M>, Result = unknown> = (
  message: Message<M, T>,
  ctx: HandlerContext<M>,
) => Result | PromiseLike<Result>

/**
 * Wraps every handler call, outermost first (registration order). Call `next()` once to run the rest
 * of the chain; what you do after `await next()` runs after the handler.
 *
 * @example
 * ```ts
 * loop.use(async (msg, ctx, next) => {
 *   const t0 = performance.now()
 *   await next()
 *   console.log(msg.type, performance.now() - t0)
 * })
 * ```
 *
 * @group Handlers
 */
export type Middleware<M extends MessageMap> = (
  message: Message<M>,
  ctx: HandlerContext<M>,
  next: () => Promise<void>,
) => unknown

/**
 * Options of a route's handler (`router.on(key, handler, options)`, `router.otherwise(handler, options)`):
 * deadlines, retries and breakers are the routed type's, set in `loop.route(type, selector, options)`.
 * Unknown keys are refused with an `InvalidArgumentError`.
 *
 * @group Handlers
 */
export interface RouteOptions {
  /**
   * Replace an existing registration instead of throwing `DuplicateHandlerError`.
   * @defaultValue false
   */
  readonly replace?: boolean
}

/**
 * Options of handler registration (`loop.on`, `loop.route`). Unknown keys are refused with an
 * `InvalidArgumentError` that names the key and suggests the known one it is a typo of.
 *
 * @typeParam M - the message map
 * @typeParam T - the registered type (`compensate` receives its messages)
 *
 * @group Handlers
 */
export interface RegisterOptions<M extends MessageMap = MessageMap, T extends MessageType<M> = MessageType<M>>
  extends RouteOptions {
  /**
   * Handler deadline for this type (ms), overriding the loop's `timeoutMs`; `Infinity` for none.
   * @defaultValue the loop's `timeoutMs`
   */
  readonly timeoutMs?: number
  /**
   * Heartbeat deadline (ms) for this type: a handler that does not call `ctx.heartbeat()` for this
   * long times out even before its hard deadline. Needs a finite hard deadline — this type's
   * `timeoutMs`, or the loop's — since that is what arms the check: without one, registering refuses
   * it with `InvalidArgumentError` (a heartbeat nothing checks would silently do nothing). A post's
   * `handlerTimeoutMs: Infinity` turns both off for that message.
   * @defaultValue undefined (no heartbeat deadline)
   * @example
   * ```ts
   * loop.on('report.build', buildReport, { timeoutMs: 10 * 60_000, heartbeatMs: 30_000 })
   * ```
   */
  readonly heartbeatMs?: number
  /**
   * Runs once after a handler of this type timed out — to undo or flag a half-done side effect — under
   * its own deadline (the same timeout) and with its own `signal`. Its outcome is the `compensated`
   * event; it never changes the message's outcome. Its message is typed as the handler's.
   */
  compensate?(message: Message<M, T>, context: { readonly signal: AbortSignalLike }): unknown
  /**
   * Checks each payload of this type as it is posted — `post`, `tryPost`, `send`, `request`, delayed
   * posts and follow-ups — before the message is accepted (a restored snapshot is not checked again).
   * What it throws refuses the post as an invalid post is refused (counted `rejected`, thrown, by
   * `tryPost` too): as it is when it is a Flowing error, else as an `InvalidArgumentError` of `payload`
   * with what was thrown as its `cause`. A handler function may
   * carry one as its own `checkPayload` property (the option wins): `threaded()` of
   * `@flowing/threads` does, so a payload that cannot cross to a thread is refused at post.
   */
  checkPayload?(payload: M[T]): void
  /** Retry policy of this type, over the loop's (fields it omits come from the loop's `retry`). */
  readonly retry?: RetryOptions
  /**
   * This type's circuit breaker: its own options, `true` for the defaults, or `false` to exempt the type
   * from the loop's `circuitBreaker`.
   * @defaultValue the loop's `circuitBreaker`
   */
  readonly circuitBreaker?: boolean | CircuitBreakerOptions
  /**
   * The old name of `circuitBreaker` (same meaning; a `DeprecationWarning` once per process).
   * @deprecated Use `circuitBreaker`.
   */
  readonly breaker?: boolean | CircuitBreakerOptions
  /**
   * This type's rate limits: one budget for the type (`per: 'type'`, the default), one per route
   * (`'route'`) or one per key (`'key'`) — on top of the loop's `rateLimit` (see {@link RateLimit}).
   */
  readonly rateLimit?: RateLimit | readonly RateLimit[]
  /**
   * This type's crash-loop guard (a positive integer, or `Infinity` for none), over the loop's
   * `maxCrashes`: with a journal store, a message of this type whose attempts this many crashes of the
   * process interrupted is dead-lettered with a `CrashLoopError` instead of running again.
   * @defaultValue the loop's `maxCrashes`
   */
  readonly maxCrashes?: number
}
