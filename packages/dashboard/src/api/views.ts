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
  /** Types paused now (`loop.controls.pauseType`): their messages are admitted but held. */
  readonly pausedTypes: readonly string[]
  readonly eventLoop: { readonly delayP50Ms: number; readonly delayP99Ms: number; readonly utilization: number }
  readonly happenings: readonly LoopHappening[]
  /** How many happenings so far (to tell the new ones). */
  readonly happened: number
  /**
   * Dead letters in the store now, and how many were ever dead-lettered: a page refreshes its list when
   * either changes (a new letter, a replay, a purge).
   */
  readonly deadLetters: { readonly count: number; readonly total: number }
}

/** The default watermark marks (60 / 80 / 95 % of the capacity). */
export const WATERMARKS: readonly number[] = [0.6, 0.8, 0.95]

/** The overview of the loop behind `c`. */
export function overview(c: Collector): Overview {
  const tick = c.latest()
  const { loop } = c.source
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
    pausedTypes: loop.controls.pausedTypes(),
    eventLoop: tick.eventLoop,
    happenings: c.happenings.toArray().slice(-50),
    happened: c.happened,
    deadLetters: { count: loop.deadLetters.size, total: tick.metrics.counters.deadLettered },
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
  const schedules = loop.schedules.list().map((s: ScheduleInfo) => ({
    id: s.id,
    type: s.type,
    spec: s.spec,
    runs: s.runs,
    paused: s.paused,
    nextAt: s.nextAt,
    payload: redaction.payload(s.type, s.payload),
  }))
  const jobs = loop.jobs.list({ limit: 200 }).map((j) => ({
    jobKey: j.jobKey,
    id: j.id,
    type: j.type,
    state: j.state,
    dueAt: j.dueAt,
    payload: redaction.payload(j.type, j.payload),
  }))
  const now = loop.inspect({ keys: 0 }).at
  return { now, delayed: loop.metrics().gauges.delayed, keyed: loop.jobs.size, schedules, jobs }
}

/** A dead letter in a list: what it is and why it failed, no payload, no stacks. */
export function letterSummary(letter: DeadLetter) {
  const { id, type, key, routeKey, priority, reason, at, atEpochMs, error } = letter
  const { name, message, code, errorClass, signature } = error
  const brief = { name, message, code, errorClass, signature }
  return { id, type, key, routeKey, priority, reason, at, atEpochMs, attempts: letter.attempts.length, error: brief }
}

/**
 * A dead letter inspected: its error with stack and causes, its attempts, and its payload, headers and
 * checkpoint through the redaction (handler state and headers are data too).
 */
export function letterDetail(letter: DeadLetter, redaction: Redaction) {
  const { id, type, key, routeKey, traceId, priority, reason, at, atEpochMs, error, attempts } = letter
  return {
    id,
    type,
    key,
    routeKey,
    traceId,
    priority,
    reason,
    at,
    atEpochMs,
    error,
    attempts,
    payload: redaction.payload(type, letter.payload),
    headers: redaction.payload(type, letter.headers),
    checkpoint: letter.checkpoint === undefined ? undefined : redaction.payload(type, letter.checkpoint),
  }
}

const NUMERIC = /^-?\d+(\.\d+)?$/

/** A message's timeline (its trace), the traces of a key's recent messages, or of a trace id (a message and its follow-ups). */
export function timeline(source: LoopSource, find: { id?: string; key?: string; trace?: string }): MessageTrace[] {
  if (find.trace !== undefined && find.trace !== '') {
    return [...source.loop.inspect({ keys: 0, traceId: find.trace }).traces] // a message and its follow-ups
  }
  if (find.id !== undefined) {
    const trace = source.loop.trace(find.id)
    return trace === undefined ? [] : [trace]
  }
  if (find.key === undefined) return []
  const byKey = (key: string | number) => [...source.loop.inspect({ keys: 0, traceKey: key }).traces]
  const found = byKey(find.key)
  // A query string cannot say whether `42` is a string key or a number key: the number, when no string.
  return found.length === 0 && NUMERIC.test(find.key) ? byKey(Number(find.key)) : found
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
