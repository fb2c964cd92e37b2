/**
 * The open pages of one dashboard: their live streams, and the tick that feeds them — once a second
 * while at least one is open, never otherwise. A tick reads each watched loop once, builds each
 * (loop, view) once however many pages show it, and cannot throw out of its timer: what fails to read
 * is sent as an error, and a page whose tick cannot be sent is cut off (it reconnects).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { toJson } from '../api/json.js'
import type { Redaction } from '../api/redaction.js'
import * as views from '../api/views.js'
import type { Collector } from '../collect/collector.js'
import { HttpError } from './respond.js'
import { Stream } from './stream.js'

/** How many pages may stream at once (a 503 past it). */
export const MAX_PAGES = 100

/** The live streams of one dashboard. */
export class Pages {
  readonly #streams = new Set<Stream>()
  readonly #collectors: ReadonlyMap<string, Collector>
  readonly #redaction: Redaction
  readonly #threads: ReadonlyMap<string, { stats(): unknown }>
  #timer: ReturnType<typeof setInterval> | undefined

  /**
   * @param collectors - the dashboard's loops
   * @param redaction - what payloads show
   * @param threads - the thread pools named in the options
   */
  constructor(
    collectors: ReadonlyMap<string, Collector>,
    redaction: Redaction,
    threads: ReadonlyMap<string, { stats(): unknown }>,
  ) {
    this.#collectors = collectors
    this.#redaction = redaction
    this.#threads = threads
  }

  /** Pages with a live stream open now. */
  get size(): number {
    return this.#streams.size
  }

  /** Opens a page's stream on `collector` (nothing when its client left already). */
  open(req: IncomingMessage, res: ServerResponse, collector: Collector, view: views.ViewName): void {
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' }).end()
      return
    }
    if (req.destroyed || res.destroyed || res.writableEnded) return // it left while being authorized
    if (this.#streams.size >= MAX_PAGES) throw new HttpError(503, 'busy', `${MAX_PAGES} pages are open already`)
    const lastEventId = req.headers['last-event-id']
    const stream = new Stream(res, collector, view, typeof lastEventId === 'string' ? lastEventId : undefined)
    collector.watch()
    this.#streams.add(stream)
    try {
      stream.open(req, () => this.#closed(stream))
      if (collector.series.size === 0) collector.tick()
      this.#send([stream])
    } catch (error) {
      this.#closed(stream)
      throw error
    }
    this.#timer ??= setInterval(() => this.#tick(), 1000).unref()
  }

  /** Ends every stream and the tick. */
  close(): void {
    for (const stream of [...this.#streams]) {
      this.#closed(stream)
      stream.end()
    }
    this.#stopTicking()
  }

  #closed(stream: Stream): void {
    if (!this.#streams.delete(stream)) return
    stream.collector.unwatch()
    if (this.#streams.size === 0) this.#stopTicking()
  }

  #tick(): void {
    const now = Date.now()
    for (const c of this.#collectors.values()) {
      if (!c.watched) continue
      try {
        c.tick(now)
      } catch {
        // a loop that cannot be read this second: its pages get the last reading again
      }
    }
    this.#send(this.#streams)
  }

  // Each (loop, view) is read and serialized once per tick, however many pages show it.
  #send(streams: Iterable<Stream>): void {
    const built = new Map<string, string>()
    for (const stream of [...streams]) {
      const id = `${stream.collector.source.name}\u0000${stream.view}`
      let head = built.get(id)
      if (head === undefined) {
        head = this.#head(stream)
        built.set(id, head)
      }
      stream.send(head)
    }
  }

  // The JSON of a tick but its points, without its closing brace.
  #head(stream: Stream): string {
    const { collector: c, view } = stream
    let overview: unknown
    let data: unknown
    try {
      overview = views.overview(c)
      data = this.#viewData(c, view)
    } catch (error) {
      data = { error: error instanceof Error ? error.message : String(error) }
    }
    return toJson({ overview, view, data }).slice(0, -1)
  }

  #viewData(c: Collector, view: views.ViewName): unknown {
    if (view === 'keys') return views.keys(c.source)
    if (view === 'flow') return views.flow(c)
    if (view === 'delayed') return views.delayed(c.source, this.#redaction)
    if (view === 'threads') return views.threads(this.#threads)
    if (view === 'nats') return views.nats(c.source)
    return undefined
  }

  #stopTicking(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }
}
