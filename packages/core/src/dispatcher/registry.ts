import { DuplicateHandlerError, InvalidArgumentError, UnknownMessageTypeError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { Message, MessageMap, MessageType } from '../message.js'
import type { Handler, HandlerContext, Middleware, RegisterOptions } from './handler.js'
import { Router } from './router.js'

type AnyHandler = Handler<MessageMap, never>
type AnyRouter = Router<MessageMap, never, string>

/**
 * The dispatcher's tables: message type → handler or router, plus the middleware chain.
 *
 * @remarks Lookups are one `Map.get`; a message with neither handler nor matching route is refused at
 * post time, never silently dropped at run time.
 */
export class Registry<M extends MessageMap> {
  readonly #handlers = new Map<string, AnyHandler | AnyRouter>()
  readonly #middleware: Middleware<M>[] = []

  /** Registers a handler for a type. */
  on<T extends MessageType<M>>(type: T, handler: Handler<M, T>, options?: RegisterOptions): void {
    checkType(type)
    if (typeof handler !== 'function') throw new InvalidArgumentError('handler', 'a function', handler)
    this.#claim(type, options)
    this.#handlers.set(type, handler as unknown as AnyHandler)
  }

  /** Registers a router for a type and returns it. */
  route<T extends MessageType<M>, R extends string>(
    type: T,
    selector: (message: Message<M, T>) => R,
    options?: RegisterOptions,
  ): Router<M, T, R> {
    checkType(type)
    const router = new Router<M, T, R>(type, selector)
    this.#claim(type, options)
    this.#handlers.set(type, router as unknown as AnyRouter)
    return router
  }

  /** Appends a middleware. */
  use(middleware: Middleware<M>): void {
    if (typeof middleware !== 'function') throw new InvalidArgumentError('middleware', 'a function', middleware)
    this.#middleware.push(middleware)
  }

  /** The registered types. */
  types(): string[] {
    return [...this.#handlers.keys()]
  }

  /**
   * Checks that `type` can be dispatched; returns its router, if any.
   * @throws UnknownMessageTypeError
   */
  resolve(type: string): AnyRouter | undefined {
    const entry = this.#handlers.get(type)
    if (entry === undefined) throw new UnknownMessageTypeError(type, this.types())
    return entry instanceof Router ? entry : undefined
  }

  /** Runs the middleware chain and the handler for one message; returns what the chain returns. */
  invoke(message: Envelope, ctx: HandlerContext<M>): unknown {
    const entry = this.#handlers.get(message.type)
    const handler = (entry instanceof Router
      ? entry.handlerFor(message.routeKey as string)
      : entry) as unknown as Handler<M, MessageType<M>>
    const msg = message as unknown as Message<M, MessageType<M>>
    if (this.#middleware.length === 0) return handler(msg, ctx) // the fast path: no chain to build
    return this.#chain(0, handler, msg, ctx)
  }

  #chain(
    index: number,
    handler: Handler<M, MessageType<M>>,
    msg: Message<M, MessageType<M>>,
    ctx: HandlerContext<M>,
  ): unknown {
    const middleware = this.#middleware[index]
    if (middleware === undefined) return handler(msg, ctx)
    let called = false
    return middleware(msg, ctx, async () => {
      if (called) throw new Error(`next() called more than once by middleware #${index}`)
      called = true
      await this.#chain(index + 1, handler, msg, ctx)
    })
  }

  #claim(type: string, options: RegisterOptions | undefined): void {
    if (this.#handlers.has(type) && options?.replace !== true) throw new DuplicateHandlerError(`\`${type}\``)
  }
}

function checkType(type: unknown): void {
  if (typeof type !== 'string' || type.length === 0) {
    throw new InvalidArgumentError('type', 'a non-empty string', type)
  }
}
