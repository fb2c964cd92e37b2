/**
 * The data of each view, as the JSON API returns it and the live stream pushes it: plain objects
 * built from the loop's public reads, payloads through the dashboard's redaction.
 *
 * @module
 */
import type { DeadLetter, LoopInspection, MessageTrace, ScheduleInfo } from '@flowing/core'
import type { Collector, LoopHappening, SeriesPoint } from '../collect/collector.js'
import type { LoopSource } from '../collect/loop-source.js'
import type { TypeRate } from '../collect/type-rates.js'
import type { Redaction } from './redaction.js'

/**
 * A view a page shows and follows on its live stream (`?view=` of the stream).
 *
 * @group Views
 */
export type ViewName = 'overview' | 'keys' | 'flow' | 'delayed' | 'dead-letters' | 'threads' | 'nats'

/** Every view. */
export const VIEWS: readonly ViewName[] = ['overview', 'keys', 'flow', 'delayed', 'dead-letters', 'threads', 'nats']

/**
 * The overview of one loop: its state, rates a second, levels, per-type rates and what happened.
 *
 * @group Views
 */
export interface Overview {
  readonly loop: string
  readonly kind: 'loop' | 'nats'
  readonly state: string
  /** Wall time of the reading, ms since the epoch. */
  readonly t: number
  readonly point: SeriesPoint
  readonly counters: Record<string, number>
  readonly gauges: Record<string, unknown>
  /** The watermark marks, as a fraction of the capacity. */
  readonly watermarks: readonly number[]
  readonly types: readonly TypeRate[]
  readonly eventLoop: { readonly delayP50Ms: number; readonly delayP99Ms: number; readonly utilization: number }
  readonly happenings: readonly LoopHappening[]
  /** How many happenings so far (to tell the new ones). */
  readonly happened: number
  /** Dead letters in the store now, and the newest one's id (a page refreshes its list when it changes). */
  readonly deadLetters: { readonly count: number; readonly newest: string | undefined }
}

/** The default watermark marks (60 / 80 / 95 % of the capacity). */
export const WATERMARKS: readonly number[] = [0.6, 0.8, 0.95]

/** The overview of the loop behind `c`. */
export function overview(c: Collector): Overview {
  const tick = c.latest()
  const { loop } = c.source
  const letters = loop.deadLetters
  const newest = letters.size === 0 ? undefined : letters.list().at(-1)?.id
  return {
    loop: c.source.name,
    kind: c.source.kind,
    state: loop.state,
    t: tick.point.t,
    point: tick.point,
    counters: { ...tick.metrics.counters },
    gauges: { ...tick.metrics.gauges },
    watermarks: WATERMARKS,
    types: tick.types,
    eventLoop: tick.eventLoop,
    happenings: c.happenings.toArray().slice(-50),
    happened: c.happened,
    deadLetters: { count: letters.size, newest },
  }
}

/** The keys view: the busiest and blocked keys, running handlers, key groups. */
export function keys(source: LoopSource, limit = 50): Omit<LoopInspection, 'limits' | 'traces'> {
  const { at, busyKeys, keys, running, groups } = source.loop.inspect({ keys: limit })
  return { at, busyKeys, keys, running, groups }
}

/** The breakers-and-limits view: breakers not closed, their history, and every rate limit now. */
export function flow(c: Collector) {
  const inspection = c.source.loop.inspect({ keys: 0 })
  return {
    at: inspection.at,
    circuits: c.source.loop.circuits(),
    history: c.happenings.toArray().filter((h) => h.kind === 'circuit' || h.kind === 'gate'),
    limits: inspection.limits,
    rateLimited: c.source.loop.metrics().counters.rateLimited,
  }
}

/** The delayed-and-scheduled view: schedules with their next fire, keyed delays, delayed count. */
export function delayed(source: LoopSource, redaction: Redaction) {
  const { loop } = source
  const schedules = loop.schedules
    .list()
    .map((s: ScheduleInfo) => ({ ...s, payload: redaction.payload(s.type, s.payload) }))
  const jobs = loop.jobs.list({ limit: 200 }).map((j) => ({ ...j, payload: redaction.payload(j.type, j.payload) }))
  const now = loop.inspect({ keys: 0 }).at
  return { now, delayed: loop.metrics().gauges.delayed, keyed: loop.jobs.size, schedules, jobs }
}

/** What a dead letter shows in a list (its payload through the redaction). */
export function letterView(letter: DeadLetter, redaction: Redaction) {
  return { ...letter, payload: redaction.payload(letter.type, letter.payload) }
}

/** A message's timeline (its trace), or the traces of a key's recent messages. */
export function timeline(source: LoopSource, find: { id?: string; key?: string }): MessageTrace[] {
  if (find.id !== undefined) {
    const trace = source.loop.trace(find.id)
    return trace === undefined ? [] : [trace]
  }
  if (find.key === undefined) return []
  return [...source.loop.inspect({ keys: 0, traceKey: find.key }).traces]
}

/** The threads view: each pool's stats (the default `@flowing/threads` pool once it exists). */
export function threads(pools: ReadonlyMap<string, { stats(): unknown }>) {
  const all = new Map(pools)
  const shared = (globalThis as Record<symbol, { stats(): unknown } | undefined>)[
    Symbol.for('@flowing/threads.defaultPool')
  ]
  if (shared !== undefined && ![...all.values()].includes(shared)) all.set('default', shared)
  return [...all].map(([name, pool]) => ({ name, stats: safely(() => pool.stats()) }))
}

/** The NATS view: the process's partitions and counters (`undefined` for an in-process loop). */
export function nats(source: LoopSource) {
  if (source.nats === undefined) return undefined
  const { local: _local, ...metrics } = safely(() => source.nats?.metrics()) as Record<string, unknown> // its local loop has the other views
  return { serverVersion: source.nats.serverVersion, ...metrics }
}

// A third-party read that may throw: its error as data instead.
function safely(read: () => unknown): unknown {
  try {
    return read()
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

/** Which views a loop's page offers now (each appears when its feature is in use). */
export function viewsOf(c: Collector, pools: ReadonlyMap<string, { stats(): unknown }>): ViewName[] {
  const out: ViewName[] = ['overview', 'keys', 'flow', 'delayed', 'dead-letters']
  if (threads(pools).length > 0) out.push('threads')
  if (c.source.nats !== undefined) out.push('nats')
  return out
}
