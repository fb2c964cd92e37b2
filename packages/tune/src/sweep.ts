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
import type { Progress } from './progress.js'
import { median } from './stats.js'
import { runTrial, type TrialResult } from './trial.js'

/**
 * A worker count's point plus the medians of the other figures, for the table.
 *
 * @group Tuning
 */
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
  /** Lifecycle p99 of each trial, for the whiskers. */
  readonly trialP99s: readonly number[]
  /** Lines the measured trial loops logged (new failure signatures), counted instead of printed. */
  readonly logged: number
  /** The first of them. */
  readonly firstLogged: string | undefined
}

/**
 * Runs the whole sweep, reporting each trial to `progress` and each count's result as a line;
 * `threads` is the trial's thread count, told to the module (the caller sized the pool).
 *
 * @group Tuning
 */
export async function sweep(
  mod: TunerModule,
  options: TuneOptions,
  progress: Progress,
  threads?: number,
): Promise<MeasuredPoint[]> {
  const points: MeasuredPoint[] = []
  const total = options.workers.length * (options.trials + 1)
  let done = 0
  for (const workers of options.workers) {
    const logged: string[] = []
    const load = {
      workers,
      threads,
      rate: options.rate,
      capacity: options.capacity,
      log: (line: string) => logged.push(line),
    }
    progress.step(`${workerCount(workers)}, warm-up`, done++, total)
    await runTrial(mod, { ...load, durationMs: options.warmupMs, warmup: true })
    logged.length = 0 // what the warm-up logged is not part of the measure
    const trials: TrialResult[] = []
    for (let t = 0; t < options.trials; t++) {
      progress.step(`${workerCount(workers)}, trial ${t + 1}/${options.trials}`, done++, total)
      trials.push(await runTrial(mod, { ...load, durationMs: options.durationMs }))
    }
    const point = summarize(workers, trials, logged)
    points.push(point)
    progress.line(`  ${workerCount(workers).padStart(11)}: ${perSecond(point.throughput)}, p99 ${ms(point.p99)} ms`)
  }
  progress.end()
  return points
}

function summarize(workers: number, trials: readonly TrialResult[], logged: readonly string[]): MeasuredPoint {
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
    trialP99s: trials.map((t) => t.lifecycleP99),
    logged: logged.length,
    firstLogged: logged[0],
  }
}
