/**
 * The process's event-loop delay and utilization, measured only while a dashboard page is open: one
 * `monitorEventLoopDelay` histogram shared by every dashboard of the process, enabled at the first
 * watcher and disabled at the last.
 *
 * @module
 */
import { type EventLoopUtilization, type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks'

/** One reading: the delay since the last one, and the share of time the loop was busy. */
export interface EventLoopReading {
  /** Event-loop delay, median and 99th percentile, ms (since the last reading). */
  readonly delayP50Ms: number
  readonly delayP99Ms: number
  /** The busy share of the event loop since the last reading, 0–1. */
  readonly utilization: number
}

let watchers = 0
let histogram: IntervalHistogram | undefined
let last: EventLoopUtilization | undefined
// Several dashboards (or loops) read once a second each: a reading younger than this is shared.
const SHARED_MS = 500
let lastReading: { at: number; reading: EventLoopReading } | undefined

/** Starts measuring (counted: each `watch` needs its `unwatch`). */
export function watchEventLoop(): void {
  if (watchers++ > 0) return
  histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  last = performance.eventLoopUtilization()
}

/** Stops measuring when the last watcher leaves. */
export function unwatchEventLoop(): void {
  if (watchers === 0 || --watchers > 0) return
  histogram?.disable()
  histogram = undefined
  last = undefined
}

/** The delay and utilization since the previous reading (zeros when nobody watches). */
export function readEventLoop(): EventLoopReading {
  if (histogram === undefined || last === undefined) return { delayP50Ms: 0, delayP99Ms: 0, utilization: 0 }
  const at = performance.now()
  if (lastReading !== undefined && at - lastReading.at < SHARED_MS) return lastReading.reading
  const now = performance.eventLoopUtilization()
  const utilization = performance.eventLoopUtilization(now, last).utilization
  last = now
  const reading = {
    delayP50Ms: round(histogram.percentile(50) / 1e6),
    delayP99Ms: round(histogram.percentile(99) / 1e6),
    utilization: round(utilization),
  }
  histogram.reset()
  lastReading = { at, reading }
  return reading
}

const round = (n: number): number => (Number.isFinite(n) ? Math.round(n * 1000) / 1000 : 0)
