/**
 * The dashboard's front: one request handler for the app's server, the loops it shows, and the clock
 * of its live streams — a tick a second while a page is open, nothing at all while none is.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Redaction } from './api/redaction.js'
import * as views from './api/views.js'
import { Collector } from './collect/collector.js'
import { LoopSource } from './collect/loop-source.js'
import { Csrf } from './http/csrf.js'
import { fail, HttpError } from './http/respond.js'
import { type RouteContext, route } from './http/router.js'
import { Stream } from './http/stream.js'
import { type DashboardOptions, type ResolvedOptions, resolveOptions } from './options.js'

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
  readonly #options: ResolvedOptions
  readonly #collectors = new Map<string, Collector>()
  readonly #streams = new Set<Stream>()
  readonly #context: RouteContext
  #timer: ReturnType<typeof setInterval> | undefined
  #closed = false

  /**
   * @internal Use {@link createDashboard}.
   * @throws InvalidArgumentError for bad options
   */
  constructor(options: DashboardOptions) {
    this.#options = resolveOptions(options)
    this.basePath = this.#options.basePath
    for (const [name, loop] of this.#options.loops) {
      this.#collectors.set(name, new Collector(new LoopSource(name, loop), this.#options.historySeconds))
    }
    this.#context = {
      options: this.#options,
      collectors: this.#collectors,
      csrf: new Csrf(this.basePath, this.#options.allowedOrigins),
      redaction: new Redaction(this.#options.payloads === 'shown', this.#options.redact),
      stream: (req, res, collector, view) => this.#open(req, res, collector, view),
    }
  }

  /**
   * The request handler, for `http.createServer(handler)`, `app.use(handler)` (Express) and the
   * adapters in the guide (Fastify, Hono). Bound: pass it as it is.
   */
  readonly handler: DashboardHandler = (req, res, next) => {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid')
    const base = this.basePath
    const mine = url.pathname === base || url.pathname.startsWith(`${base}/`) || base === ''
    if (!mine || this.#closed) {
      if (next !== undefined) return next()
      return fail(req, res, new HttpError(404, 'not-found', 'not found'))
    }
    if (base !== '' && url.pathname === base) {
      res.statusCode = 308
      res.setHeader('location', `${base}/${url.search}`)
      return void res.end()
    }
    route(this.#context, req, res, url).catch((error: unknown) => fail(req, res, error))
  }

  /** Pages with a live stream open now. */
  get pages(): number {
    return this.#streams.size
  }

  /** Ends every open stream and stops listening to the loops' per-message events. Idempotent. */
  close(): void {
    this.#closed = true
    for (const stream of [...this.#streams]) stream.end()
  }

  #open(req: IncomingMessage, res: ServerResponse, collector: Collector, view: views.ViewName): void {
    if (this.#closed) throw new HttpError(503, 'closed', 'the dashboard is closed')
    const lastEventId = req.headers['last-event-id']
    const stream = new Stream(res, collector, view, typeof lastEventId === 'string' ? lastEventId : undefined)
    this.#streams.add(stream)
    collector.watch()
    stream.open(req, () => {
      this.#streams.delete(stream)
      collector.unwatch()
      if (this.#streams.size === 0) this.#stopTicking()
    })
    if (collector.series.size === 0) collector.tick()
    this.#send(new Set([stream]))
    this.#timer ??= setInterval(() => this.#tick(), 1000).unref()
  }

  #tick(): void {
    const now = Date.now()
    for (const c of this.#collectors.values()) if (c.watched) c.tick(now)
    this.#send(this.#streams)
  }

  // Each (loop, view) is read once per tick, however many pages show it.
  #send(streams: Iterable<Stream>): void {
    const read = new Map<string, { overview: object; data: unknown }>()
    for (const stream of streams) {
      const id = `${stream.collector.source.name}\u0000${stream.view}`
      let tick = read.get(id)
      if (tick === undefined) {
        tick = { overview: views.overview(stream.collector), data: this.#viewData(stream) }
        read.set(id, tick)
      }
      stream.send(tick.overview, tick.data)
    }
  }

  #viewData(stream: Stream): unknown {
    const { collector: c, view } = stream
    try {
      if (view === 'keys') return views.keys(c.source)
      if (view === 'flow') return views.flow(c)
      if (view === 'delayed') return views.delayed(c.source, this.#context.redaction)
      if (view === 'threads') return views.threads(this.#options.threads)
      if (view === 'nats') return views.nats(c.source)
      return undefined
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) }
    }
  }

  #stopTicking(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
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
