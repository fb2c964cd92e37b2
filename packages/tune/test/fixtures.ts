import type { TuneOptions } from '../src/args.js'
import { tiny as smokeOptions } from '../src/smoke.js'
import type { MeasuredPoint } from '../src/sweep.js'

/** A measured point with quiet defaults; `trials` are its trials' throughputs (median = throughput). */
export function point(workers: number, trials: readonly number[], extra: Partial<MeasuredPoint> = {}): MeasuredPoint {
  const sorted = [...trials].sort((a, b) => a - b)
  return {
    workers,
    throughput: sorted[sorted.length >> 1] as number,
    p99: 10,
    utilization: 0.3,
    lifecycleP50: 5,
    queueWaitP50: 1,
    queueWaitP99: 2,
    handlerP50: 4,
    eventLoopDelayP99: 1,
    failureRate: 0,
    refusedRate: 0,
    trialThroughputs: trials,
    trialP99s: trials.map(() => 10),
    logged: 0,
    firstLogged: undefined,
    ...extra,
  }
}

/** Options of a tiny quiet sweep: the smoke's, shorter still and on two counts. */
export function tiny(module: string, extra: Partial<TuneOptions> = {}): TuneOptions {
  return smokeOptions(module, { workers: [1, 4], durationMs: 150, warmupMs: 30, ...extra })
}
