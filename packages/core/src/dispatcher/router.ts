import type { Message, MessageMap, MessageType } from '../contracts/message.js'
import { DuplicateHandlerError, InvalidArgumentError, isFlowingError, UnknownRouteError } from '../errors.js'
import { thrownText } from '../failure/describe-failure.js'
import * as check from '../internal/validate.js'
import type { Handler, RouteOptions } from './handler.js'

/**
 * The second match of the dispatcher: a message type whose handler depends on a route key computed
 * from the message, e.g. an order's status.
 *
 * @typeParam M - the message map
 * @typeParam T - the routed type
 * @typeParam R - the route keys the selector can produce; `on()` accepts only these
 * @typeParam Result - what its handlers must return (the type's entry in the loop's `ResultMap`)
 *
 * @example
 * ```ts
 * loop.route('order.updated', (msg) => msg.payload.status)
 *   .on('paid', onPaid)
 *   .on('refunded', onRefund)
 *   .otherwise(onOther)
 * ```
 *
 * @group Handlers
 */
export interface Router<M extends MessageMap, T extends MessageType<M>, R extends string, Result = unknown> {
  /** The routed message type. */
  readonly type: T
  /**
   * Registers the handler of one route key.
   *
   * @throws `DuplicateHandlerError` if the route already has one (unless `replace`),
   * `InvalidArgumentError` for a non-string key, a non-function handler or bad options
   */
  on(routeKey: R, handler: Handler<M, T, Result>, options?: RouteOptions): this
  /**
   * Registers the handler of every route key without one of its own.
   *
   * @throws `DuplicateHandlerError` if there is one already (unless `replace`), `InvalidArgumentError`
   */
  otherwise(handler: Handler<M, T, Result>, options?: RouteOptions): this
}

/** The dispatcher's side of a {@link Router}: it also selects a message's route and finds its handler. */
export class RouteTable<M extends MessageMap, T extends MessageType<M>, R extends string> implements Router<M, T, R> {
  readonly type: T
  readonly #selector: (message: Message<M, T>) => R
  readonly #routes = new Map<string, Handler<M, T>>()
  #otherwise: Handler<M, T> | undefined

  /**
   * @param type - the routed type
   * @param selector - computes the route key; runs once, at post time
   */
  constructor(type: T, selector: (message: Message<M, T>) => R) {
    if (typeof selector !== 'function') throw new InvalidArgumentError('selector', 'a function', selector)
    this.type = type
    this.#selector = selector
  }

  /**
   * Registers the handler of one route key.
   *
   * @throws `DuplicateHandlerError` if the route already has one (unless `replace`),
   * `InvalidArgumentError` for a non-string key, a non-function handler or bad options
   */
  on(routeKey: R, handler: Handler<M, T>, options?: RouteOptions): this {
    if (typeof routeKey !== 'string') throw new InvalidArgumentError('routeKey', 'a string', routeKey)
    if (typeof handler !== 'function') throw new InvalidArgumentError('handler', 'a function', handler)
    const replace = replaces(options)
    if (this.#routes.has(routeKey) && !replace) {
      throw new DuplicateHandlerError(`\`${this.type}\` › \`${routeKey}\``)
    }
    this.#routes.set(routeKey, handler)
    return this
  }

  /**
   * Registers the fallback for route keys without a handler (otherwise they are rejected at post).
   *
   * @throws `DuplicateHandlerError` if there is one (unless `replace`), `InvalidArgumentError` for a
   * non-function handler or bad options
   */
  otherwise(handler: Handler<M, T>, options?: RouteOptions): this {
    if (typeof handler !== 'function') throw new InvalidArgumentError('handler', 'a function', handler)
    const replace = replaces(options)
    if (this.#otherwise !== undefined && !replace) {
      throw new DuplicateHandlerError(`\`${this.type}\` › otherwise()`)
    }
    this.#otherwise = handler
    return this
  }

  /**
   * Computes and checks a message's route key (at post time).
   * @throws UnknownRouteError; InvalidArgumentError (`cause`: what it threw) when the selector throws
   */
  select(message: Message<M, T>): string {
    let routeKey: R
    try {
      routeKey = this.#selector(message)
    } catch (error) {
      if (isFlowingError(error)) throw error // already typed (the selector's own choice)
      const rule = `a function that returns the route key of every \`${this.type}\` message without throwing`
      const hint = `it threw ${thrownText(error)} for message ${message.id}`
      throw new InvalidArgumentError('selector', rule, this.#selector, { cause: error, hint })
    }
    if (!this.#routes.has(routeKey) && this.#otherwise === undefined) {
      throw new UnknownRouteError(this.type, routeKey, [...this.#routes.keys()])
    }
    return routeKey
  }

  /** The handler for a route key chosen by {@link RouteTable.select}. */
  handlerFor(routeKey: string): Handler<M, T> {
    return (this.#routes.get(routeKey) ?? this.#otherwise) as Handler<M, T>
  }
}

// Validates a route's options (strict: `replace` only) and answers whether they ask to replace.
function replaces(options: RouteOptions | undefined): boolean {
  if (options === undefined) return false
  const o = check.snapshotOptions('options', options)
  check.checkKnownKeys('options', o, ['replace'])
  const { replace } = o as { readonly replace?: unknown }
  return replace !== undefined && check.boolean('options.replace', replace)
}
