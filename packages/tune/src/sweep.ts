/**
 * The sweep: for each worker count, a warm-up trial (discarded: JIT, caches, connection pools) and then
 * `trials` measured trials whose medians become the count's point.
 *
 * @module
 */

import type { TuneOptions } from './args.js'
import { ms, perSecond, workerCount } from './format.js'
import type { SweepPoint } from './knee.js'
import type { TunerModule } from './module.js'
import { median } from './stats.js'
import { runTrial, type TrialResult } from './trial.js'

/** A worker count's point plus the medians of the other figures, for the table. */
export interface MeasuredPoint extends SweepPoint {
  readonly lifecycleP50: number
  readonly queueWaitP50: number
  readonly queueWaitP99: number
  readonly handlerP50: number
  readonly eventLoopDelayP99: number
  /** Failed share of finished messages, 0–1. */
  readonly failureRate: number
  /** Open loop: refused share of offered messages, 0–1. */
  readonly refusedRate: number
  /** Throughput of each trial, for the spread. */
  readonly trialThroughputs: readonly number[]
}

/** Runs the whole sweep; `progress` gets one line per worker count. */
export async function sweep(
  mod: TunerModule,
  options: TuneOptions,
  progress: (line: string) => void,
): Promise<MeasuredPoint[]> {
  const points: MeasuredPoint[] = []
  for (const workers of options.workers) {
    const load = { workers, rate: options.rate, capacity: options.capacity }
    await runTrial(mod, { ...load, durationMs: options.warmupMs, warmup: true })
    const trials: TrialResult[] = []
    for (let t = 0; t < options.trials; t++)
      trials.push(await runTrial(mod, { ...load, durationMs: options.durationMs }))
    const point = summarize(workers, trials)
    points.push(point)
    progress(`  ${workerCount(workers).padStart(11)}: ${perSecond(point.throughput)}, p99 ${ms(point.p99)} ms`)
  }
  return points
}

function summarize(workers: number, trials: readonly TrialResult[]): MeasuredPoint {
  const m = (pick: (t: TrialResult) => number): number => median(trials.map(pick))
  const finished = trials.reduce((n, t) => n + t.succeeded + t.failed, 0)
  const offered = finished + trials.reduce((n, t) => n + t.refused, 0)
  return {
    workers,
    throughput: m((t) => t.throughput),
    p99: m((t) => t.lifecycleP99),
    utilization: m((t) => t.utilization),
    lifecycleP50: m((t) => t.lifecycleP50),
    queueWaitP50: m((t) => t.queueWaitP50),
    queueWaitP99: m((t) => t.queueWaitP99),
    handlerP50: m((t) => t.handlerP50),
    eventLoopDelayP99: m((t) => t.eventLoopDelayP99),
    failureRate: trials.reduce((n, t) => n + t.failed, 0) / Math.max(1, finished),
    refusedRate: trials.reduce((n, t) => n + t.refused, 0) / Math.max(1, offered),
    trialThroughputs: trials.map((t) => t.throughput),
  }
}
