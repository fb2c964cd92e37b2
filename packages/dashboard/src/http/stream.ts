/**
 * The live stream of one open page: Server-Sent Events, one `tick` a second with the loop's overview,
 * the data of the view the page shows, and the chart points since the last one it received. Each
 * event's id is its wall time: a page that reconnects (`Last-Event-ID`) gets the points it missed from
 * the loop's history. A page that stops reading is cut off past a bound (its browser reconnects and
 * resumes), so a stalled tab cannot grow the server's memory.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { toJson } from '../api/json.js'
import type { ViewName } from '../api/views.js'
import type { Collector } from '../collect/collector.js'
import { secure } from './respond.js'

/** Bytes a page may leave unread before it is cut off. */
export const MAX_UNREAD = 256 * 1024

/** One open page's stream. */
export class Stream {
  /** Wall time of the last point sent. */
  #lastT: number
  #closed = false

  /**
   * @param res - the response the events go to
   * @param collector - the loop it follows
   * @param view - the view whose data it gets
   * @param lastEventId - the `Last-Event-ID` it resumes after, if any
   */
  constructor(
    readonly res: ServerResponse,
    readonly collector: Collector,
    readonly view: ViewName,
    lastEventId: string | undefined,
  ) {
    const resumed = lastEventId === undefined ? Number.NaN : Number(lastEventId)
    this.#lastT = Number.isFinite(resumed) ? resumed : 0
  }

  /** Sends the response's head (the stream stays open). */
  open(req: IncomingMessage, onClose: () => void): void {
    secure(this.res)
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    })
    this.res.write('retry: 1000\n\n')
    const close = () => {
      if (this.#closed) return
      this.#closed = true
      onClose()
    }
    req.on('close', close)
    this.res.on('close', close)
    this.res.on('error', close)
  }

  /** Whether it is closed. */
  get closed(): boolean {
    return this.#closed
  }

  /** Sends one tick: `head` (the overview and the view's data, as JSON without its closing brace) and the points since the last sent. */
  send(head: string): void {
    if (this.#closed) return
    if (this.res.writableLength > MAX_UNREAD) {
      this.res.destroy() // it reconnects and resumes from its last event id
      return
    }
    const points = this.collector.series.after((p) => p.t <= this.#lastT)
    const last = points.at(-1)
    if (last !== undefined) this.#lastT = last.t
    this.res.write(`id: ${this.#lastT}\nevent: tick\ndata: ${head},"points":${toJson(points)}}\n\n`)
  }

  /** Ends the stream (and its connection: an event stream's response never ends by itself). */
  end(): void {
    if (!this.#closed) this.res.destroy()
  }
}
