/**
 * One loop's numbers over time, while a page watches it: a tick a second reads the loop's metrics
 * (exact counters, turned into rates), the per-type rates, the event loop, and keeps the last
 * minutes for the charts. Its rare events — breakers, workers, backpressure, gates, alerts — are kept
 * from the start in a short history (they cost nothing per message).
 *
 * @module
 */
import type { LoopCounters, LoopEvents, MessageMap, MetricsSnapshot } from '@flowing/core'
import { type EventLoopReading, readEventLoop, unwatchEventLoop, watchEventLoop } from './event-loop.js'
import type { LoopSource } from './loop-source.js'
import { Ring } from './ring.js'
import { EXACT_BELOW, type TypeRate, TypeRates } from './type-rates.js'

/**
 * One chart point: wall time (ms since the epoch), rates a second, levels.
 *
 * @group Views
 */
export interface SeriesPoint {
  readonly t: number
  readonly posted: number
  readonly succeeded: number
  readonly failed: number
  readonly deadLettered: number
  readonly queued: number
  readonly fill: number
  readonly running: number
  readonly workers: number
  readonly delayP99Ms: number
  readonly utilization: number
}

/**
 * Something that happened to the loop as a whole: a breaker opened, workers were added, the pressure
 * level changed, a gate closed, an alert was raised, a schedule refused a fire, the store failed.
 *
 * @group Views
 */
export interface LoopHappening {
  /** Wall time, ms since the epoch. */
  readonly t: number
  readonly kind: 'circuit' | 'workers' | 'backpressure' | 'gate' | 'alert' | 'schedule-refused' | 'store-error'
  /** One line saying what happened. */
  readonly text: string
  /** The event's data (plain, JSON-safe). */
  readonly data: Record<string, unknown>
}

/** What one tick read. */
export interface Tick {
  readonly point: SeriesPoint
  readonly types: readonly TypeRate[]
  readonly eventLoop: EventLoopReading
  readonly metrics: MetricsSnapshot
}

const HAPPENINGS = 200
type Events = LoopEvents<MessageMap>

/** One watched loop's history and rates. */
export class Collector {
  readonly source: LoopSource
  readonly series: Ring<SeriesPoint>
  readonly happenings = new Ring<LoopHappening>(HAPPENINGS)
  #happened = 0
  readonly #rates: TypeRates
  #last: { at: number; counters: LoopCounters } | undefined
  #latest: Tick | undefined
  #watchers = 0
  readonly #offs: (() => void)[] = []
  // When the collector began and the loop's `posted` then: the loop's mean rate, for a page's first second.
  readonly #born: { readonly at: number; readonly posted: number }

  /**
   * @param source - the loop
   * @param historySeconds - chart points kept (one a second)
   */
  constructor(source: LoopSource, historySeconds: number) {
    this.source = source
    this.series = new Ring(historySeconds)
    this.#rates = new TypeRates(source.loop)
    this.#born = { at: Date.now(), posted: source.loop.metrics().counters.posted }
    this.#listen()
  }

  /** How many happenings were recorded so far (the stream sends the new ones). */
  get happened(): number {
    return this.#happened
  }

  /** The last tick's reading, or a fresh one when nothing watches. */
  latest(): Tick {
    return this.#latest ?? this.#read(Date.now())
  }

  /** A page opened: start counting (the first one attaches the listeners). */
  watch(): void {
    if (this.#watchers++ > 0) return
    watchEventLoop()
    const now = Date.now()
    const posted = this.source.loop.metrics().counters.posted - this.#born.posted
    this.#rates.attach(now, (posted * 1000) / Math.max(1000, now - this.#born.at) < EXACT_BELOW)
    this.#last = undefined
  }

  /** A page closed: the last one detaches everything, so the loop pays nothing. */
  unwatch(): void {
    if (this.#watchers === 0 || --this.#watchers > 0) return
    unwatchEventLoop()
    this.#rates.detach(Date.now())
    this.#latest = undefined
  }

  /** Whether a page watches this loop. */
  get watched(): boolean {
    return this.#watchers > 0
  }

  /** Reads the loop: a new chart point and rates (call once a second while watched). */
  tick(now = Date.now()): Tick {
    const tick = this.#read(now)
    this.series.push(tick.point)
    this.#latest = tick
    return tick
  }

  #read(now: number): Tick {
    const metrics = this.source.loop.metrics()
    const { counters: c, gauges: g } = metrics
    const last = this.#last ?? { at: now - 1000, counters: c }
    const elapsed = Math.max(1, now - last.at)
    const perSecond = (n: number) => Math.round((n * 10_000) / elapsed) / 10
    const delta = { posted: c.posted - last.counters.posted, succeeded: c.succeeded - last.counters.succeeded }
    const types = this.watched ? this.#rates.rates(now, elapsed, delta) : []
    const eventLoop = readEventLoop()
    this.#last = { at: now, counters: c }
    const point: SeriesPoint = {
      t: now,
      posted: perSecond(delta.posted),
      succeeded: perSecond(delta.succeeded),
      failed: perSecond(c.failed - last.counters.failed),
      deadLettered: perSecond(c.deadLettered - last.counters.deadLettered),
      queued: g.queued,
      fill: g.fill,
      running: g.running,
      workers: g.workers,
      delayP99Ms: eventLoop.delayP99Ms,
      utilization: eventLoop.utilization,
    }
    return { point, types, eventLoop, metrics }
  }

  /** Leaves the loop: its rare-event listeners off, its per-message ones too if a page still watched. */
  dispose(): void {
    for (const off of this.#offs.splice(0)) off()
    if (this.#watchers > 0) {
      this.#watchers = 1
      this.unwatch()
    }
  }

  // The rare events, kept from the start: none of them fires per message.
  #listen(): void {
    const events = this.source.loop.events
    const on = <E extends keyof Events>(event: E, what: (...args: Events[E]) => Omit<LoopHappening, 't'>) => {
      const listener = ((...args: Events[E]) => {
        this.happenings.push({ t: Date.now(), ...what(...args) })
        this.#happened++
      }) as never
      events.on(event, listener)
      this.#offs.push(() => events.off(event, listener))
    }
    on('circuit', (c) => happening('circuit', `breaker ${c.route}: ${c.previous} → ${c.state} (${c.reason})`, c))
    on('workers', (w) => happening('workers', `workers ${w.from} → ${w.to} (${w.reason})`, w))
    on('backpressure', (p) => happening('backpressure', `pressure ${p.from} → ${p.to}`, p))
    on('gate', (g) => happening('gate', `gate ${g.state}`, g))
    on('alert', (a) => happening('alert', `alert: ${a.type}, ${a.inWindow} dead letters in ${a.windowMs} ms`, a))
    on('schedule-refused', (id, e) => happening('schedule-refused', `schedule ${id} refused a fire`, { id, error: e }))
    on('store-error', (e) => happening('store-error', `store: ${e.message}`, { message: e.message }))
  }
}

function happening(kind: LoopHappening['kind'], text: string, data: object): Omit<LoopHappening, 't'> {
  return { kind, text, data: plain(data) }
}

// A JSON-safe copy of an event's data (errors become their name and message).
function plain(data: object): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(data, (_key, v) => (v instanceof Error ? `${v.name}: ${v.message}` : v)))
  } catch {
    return {}
  }
}
