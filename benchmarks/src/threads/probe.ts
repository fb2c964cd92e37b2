/**
 * What the event loop felt during a run: perf_hooks' `monitorEventLoopDelay` (1 ms resolution) and a
 * 10 ms `setInterval` whose lateness (gap between fires − 10 ms) says whether timers on the loop fire
 * on time.
 *
 * @module
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { summarizeLateness } from '../lib/wheel-fire.js'

/** The interval the timer probe asks for (ms). */
export const TICK_MS = 10

/** Event-loop delay of one run, ms. */
export interface LoopDelay {
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** The 10 ms interval's lateness p99 and max. */
  readonly timerP99: number
  readonly timerMax: number
  /** Interval fires seen (few: the loop was blocked for long stretches). */
  readonly ticks: number
}

/** A running probe; `stop()` lets overdue timers fire once (a blocked loop records its block), then reads both. */
export interface Probe {
  stop(): Promise<LoopDelay>
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts both probes. */
export function startProbe(): Probe {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  const lateness: number[] = []
  let last = performance.now()
  const interval = setInterval(() => {
    const now = performance.now()
    lateness.push(now - last - TICK_MS)
    last = now
  }, TICK_MS)
  return {
    async stop() {
      // A run that blocked the loop to its end has left the probes' timers overdue: one more
      // interval lets both fire and record the block instead of missing it.
      await sleep(TICK_MS + 2)
      clearInterval(interval)
      histogram.disable()
      const timer = summarizeLateness(Float64Array.from(lateness.length > 0 ? lateness : [Number.NaN]))
      const empty = histogram.count === 0
      return {
        p50: empty ? Number.NaN : histogram.percentile(50) / 1e6,
        p99: empty ? Number.NaN : histogram.percentile(99) / 1e6,
        max: empty ? Number.NaN : histogram.max / 1e6,
        timerP99: timer.p99,
        timerMax: timer.max,
        ticks: lateness.length,
      }
    },
  }
}
