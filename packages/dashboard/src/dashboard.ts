/**
 * The dashboard's front: one request handler for the app's server, the loops it shows, and the clock
 * of its live streams — a tick a second while a page is open, nothing at all while none is.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Redaction } from './api/redaction.js'
import { Collector } from './collect/collector.js'
import { Csrf } from './http/csrf.js'
import { Pages } from './http/pages.js'
import { splitUrl } from './http/request-path.js'
import { fail, HttpError } from './http/respond.js'
import { type RouteContext, route } from './http/router.js'
import { type DashboardOptions, resolveOptions } from './options.js'

/**
 * A `node:http` handler: answers requests under the base path; passes others to `next` (Express,
 * Connect) or answers them 404 without one.
 *
 * @group Dashboard
 */
export type DashboardHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void

/**
 * A live dashboard over one or more loops. Make one with {@link createDashboard}; mount
 * {@link Dashboard.handler} in your server.
 *
 * @group Dashboard
 */
export class Dashboard {
  /** Where it is mounted (`''` at the root). */
  readonly basePath: string
  readonly #collectors = new Map<string, Collector>()
  readonly #pages: Pages
  readonly #context: RouteContext
  #closed = false

  /**
   * @internal Use {@link createDashboard}.
   * @throws InvalidArgumentError for bad options
   */
  constructor(options: DashboardOptions) {
    const o = resolveOptions(options)
    this.basePath = o.basePath
    for (const [name, source] of o.loops) this.#collectors.set(name, new Collector(source, o.historySeconds))
    const redaction = new Redaction(o.payloads === 'shown', o.redact)
    this.#pages = new Pages(this.#collectors, redaction, o.threads)
    this.#context = {
      options: o,
      collectors: this.#collectors,
      csrf: new Csrf(o.secret, o.allowedOrigins),
      redaction,
      stream: (req, res, collector, view) => this.#pages.open(req, res, collector, view),
    }
  }

  /**
   * The request handler, for `http.createServer(handler)`, `app.use(handler)` (Express) and the
   * adapters in the guide (Fastify, Hono). Bound: pass it as it is. It matches its base path on the
   * path as sent (dot segments are not resolved: a path that would resolve into the dashboard is not
   * the dashboard's), and never throws.
   */
  readonly handler: DashboardHandler = (req, res, next) => {
    const path = splitUrl(req.url)
    const base = this.basePath
    const mine = base === '' || path.pathname === base || path.pathname.startsWith(`${base}/`)
    if (!mine || this.#closed) {
      if (next !== undefined) return next()
      return fail(req, res, new HttpError(404, 'not-found', 'not found'))
    }
    if (base !== '' && path.pathname === base) {
      res.statusCode = 308
      res.setHeader('location', `${base}/${path.search}`)
      return void res.end()
    }
    route(this.#context, req, res, path).catch((error: unknown) => fail(req, res, error))
  }

  /** Pages with a live stream open now. */
  get pages(): number {
    return this.#pages.size
  }

  /**
   * Ends every open stream, stops the tick and leaves the loops: no listener of the dashboard's stays
   * on them. Requests after it are passed to `next` (or answered 404). Idempotent.
   */
  close(): void {
    this.#closed = true
    this.#pages.close()
    for (const c of this.#collectors.values()) c.dispose()
  }
}

/**
 * Creates a dashboard over `options.loops`, to mount in the app's own HTTP server.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createLoop } from '@flowing/core'
 * import { createDashboard } from '@flowing/dashboard'
 *
 * const loop = createLoop()
 * const dashboard = createDashboard({ loops: { orders: loop }, basePath: '/flowing' })
 * const server = createServer(dashboard.handler).listen(0)
 * // … open http://localhost:<port>/flowing/
 * server.close()
 * dashboard.close()
 * await loop.stop()
 * ```
 *
 * @throws InvalidArgumentError for an unknown option, a bad value, a loop that is not a Flowing loop
 * @group Dashboard
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  return new Dashboard(options)
}
