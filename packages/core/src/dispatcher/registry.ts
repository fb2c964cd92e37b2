import type { CircuitPolicy } from '../contracts/failures.js'
import type { RateRule } from '../contracts/flow.js'
import type { Message, MessageMap, MessageType } from '../contracts/message.js'
import type { RetryOptions } from '../contracts/retry.js'
import { DuplicateHandlerError, InvalidArgumentError, UnknownMessageTypeError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { Handler, HandlerContext, Middleware, RegisterOptions } from './handler.js'
import { type Extras, extrasOf, registerOptions } from './register-options.js'
import { type Router, RouteTable } from './router.js'

type AnyHandler = Handler<MessageMap, never>
type AnyRouter = RouteTable<MessageMap, never, string>

/** What a type dispatches to: a handler, or a router that picks one by route key. */
interface Entry extends Extras {
  readonly handler: AnyHandler | undefined
  readonly router: AnyRouter | undefined
}

/**
 * The dispatcher's tables: message type → handler or router, plus the middleware chain.
 *
 * @remarks Lookups are one `Map.get`, skipped when the type is the one looked up last (streams of one
 * type are the common case); a message with neither handler nor matching route is refused at post time,
 * never silently dropped at run time.
 */
export class Registry<M extends MessageMap> {
  // The loop's handler deadline, for the types without their own (a heartbeat needs a finite one).
  readonly #loopTimeoutMs: number
  readonly #entries = new Map<string, Entry>()
  readonly #middleware: Middleware<M>[] = []
  // One-entry lookup cache: a string identity check instead of a hash lookup, twice per message. Empty
  // is NO_TYPE, never `undefined`: `post(undefined)` must miss the cache and be refused.
  #lastType: string | typeof NO_TYPE = NO_TYPE
  #lastEntry: Entry | undefined
  // Told after each registration (flow control re-reads the types' rate limits).
  #changed: () => void = () => {}

  /** @param loopTimeoutMs - the loop's `timeoutMs` (`Infinity`: none) */
  constructor(loopTimeoutMs = Number.POSITIVE_INFINITY) {
    this.#loopTimeoutMs = loopTimeoutMs
  }

  /** Sets who is told after each registration. */
  onChange(changed: () => void): void {
    this.#changed = changed
  }

  /** Registers a handler for a type. */
  on<T extends MessageType<M>>(type: T, handler: Handler<M, T>, options?: RegisterOptions): void {
    checkType(type)
    if (typeof handler !== 'function') throw new InvalidArgumentError('handler', 'a function', handler)
    const o = registerOptions(options)
    const extras = extrasOf(o, this.#loopTimeoutMs, handler) // every check before anything is registered (I7)
    this.#claim(type, o)
    this.#set(type, { handler: handler as unknown as AnyHandler, router: undefined, ...extras })
  }

  /** Registers a router for a type and returns it. */
  route<T extends MessageType<M>, R extends string>(
    type: T,
    selector: (message: Message<M, T>) => R,
    options?: RegisterOptions,
  ): Router<M, T, R> {
    checkType(type)
    const router = new RouteTable<M, T, R>(type, selector)
    const o = registerOptions(options)
    const extras = extrasOf(o, this.#loopTimeoutMs)
    this.#claim(type, o)
    this.#set(type, { handler: undefined, router: router as unknown as AnyRouter, ...extras })
    return router
  }

  /** Appends a middleware. */
  use(middleware: Middleware<M>): void {
    if (typeof middleware !== 'function') throw new InvalidArgumentError('middleware', 'a function', middleware)
    this.#middleware.push(middleware)
  }

  /** The registered types. */
  types(): string[] {
    return [...this.#entries.keys()]
  }

  /** The type's payload check (`checkPayload`), if it has one; run at post time. */
  payloadCheckFor(type: string): ((payload: unknown) => void) | undefined {
    return this.#lookup(type).checkPayload
  }

  /** The type's own handler deadline, if it was registered with one. */
  timeoutFor(type: string): number | undefined {
    return this.#lookup(type).timeoutMs
  }

  /** The type's own `maxCrashes`, if it was registered with one. */
  maxCrashesFor(type: string): number | undefined {
    return this.#lookup(type).maxCrashes
  }

  /** The type's heartbeat deadline, if any. */
  heartbeatFor(type: string): number | undefined {
    return this.#lookup(type).heartbeatMs
  }

  /** The type's compensation hook, if any. */
  compensationFor(type: string): RegisterOptions['compensate'] {
    return this.#lookup(type).compensate
  }

  /** The type's own retry policy (partial), if it was registered with one. */
  retryFor(type: string): RetryOptions | undefined {
    return this.#lookup(type).retry
  }

  /** The type's own breaker policy (`false`: exempt), if it was registered with one. */
  breakerFor(type: string): CircuitPolicy | false | undefined {
    return this.#lookup(type).breaker
  }

  /** The type's own rate limits (none unless registered with `rateLimit`); an unknown type has none. */
  rateLimitsFor(type: string): readonly RateRule[] {
    return this.#entries.get(type)?.rateLimits ?? NO_RULES
  }

  /** Some type was registered with a rate limit. */
  get limited(): boolean {
    for (const e of this.#entries.values()) if (e.rateLimits.length > 0) return true
    return false
  }

  /**
   * Checks that `type` can be dispatched; returns its router, if any.
   * @throws UnknownMessageTypeError
   */
  resolve(type: string): AnyRouter | undefined {
    return this.#lookup(type).router
  }

  /**
   * Runs the middleware chain and the handler for one message; returns what the chain returns.
   * @param entered - told once the handler itself was called (after middleware, once its synchronous
   *   part returned or threw): a clock reading taken there is never earlier than the handler's first
   *   statement (rate limits count a start from it)
   */
  invoke(message: Envelope, ctx: HandlerContext<M>, entered?: Entered<M>): unknown {
    const entry = this.#lookup(message.type)
    const handler = (entry.router === undefined
      ? entry.handler
      : entry.router.handlerFor(message.routeKey as string)) as unknown as Handler<M, MessageType<M>>
    const msg = message as unknown as Message<M, MessageType<M>>
    if (this.#middleware.length === 0) {
      // The fast path: no chain to build.
      return entered === undefined ? handler(msg, ctx) : callEntering(handler, msg, ctx, entered)
    }
    // The chain settles with the handler's value (what `request()` resolves with), not a middleware's.
    const result = { value: undefined as unknown, entered }
    return Promise.resolve(this.#chain(0, handler, msg, ctx, result)).then(() => result.value)
  }

  #chain(
    index: number,
    handler: Handler<M, MessageType<M>>,
    msg: Message<M, MessageType<M>>,
    ctx: HandlerContext<M>,
    result: { value: unknown; readonly entered: Entered<M> | undefined },
  ): unknown {
    const middleware = this.#middleware[index]
    if (middleware === undefined) {
      return result.entered === undefined ? handler(msg, ctx) : callEntering(handler, msg, ctx, result.entered)
    }
    let called = false
    return middleware(msg, ctx, async () => {
      if (called) throw new Error(`next() called more than once by middleware #${index}`)
      called = true
      const value = await this.#chain(index + 1, handler, msg, ctx, result)
      if (index === this.#middleware.length - 1) result.value = value
    })
  }

  #lookup(type: string): Entry {
    if (type === this.#lastType) return this.#lastEntry as Entry
    const entry = this.#entries.get(type)
    if (entry === undefined) {
      checkType(type) // a non-string is a bad argument, not an unknown type
      throw new UnknownMessageTypeError(type, this.types())
    }
    this.#lastType = type
    this.#lastEntry = entry
    return entry
  }

  #set(type: string, entry: Entry): void {
    this.#entries.set(type, entry)
    this.#lastType = NO_TYPE // a replaced registration must not be served from the cache
    this.#lastEntry = undefined
    this.#changed()
  }

  #claim(type: string, options: RegisterOptions | undefined): void {
    if (this.#entries.has(type) && options?.replace !== true) throw new DuplicateHandlerError(`\`${type}\``)
  }
}

/** Told once a handler was called (see {@link Registry.invoke}). */
export type Entered<M extends MessageMap> = (ctx: HandlerContext<M>) => void

// Calls the handler, then tells `entered` — also when it throws: it was entered all the same.
function callEntering<M extends MessageMap>(
  handler: Handler<M, MessageType<M>>,
  msg: Message<M, MessageType<M>>,
  ctx: HandlerContext<M>,
  entered: Entered<M>,
): unknown {
  try {
    return handler(msg, ctx)
  } finally {
    entered(ctx)
  }
}

const NO_TYPE = Symbol('no type')
const NO_RULES: readonly RateRule[] = []

function checkType(type: unknown): void {
  if (typeof type !== 'string' || type.length === 0) {
    throw new InvalidArgumentError('type', 'a non-empty string', type)
  }
}
