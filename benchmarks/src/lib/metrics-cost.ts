/**
 * What one `loop.metrics()` call costs: on a fresh loop, and on one that has processed a workload with
 * random keys and priorities (every per-priority queue-wait histogram and the handler-time histogram
 * filled). Median µs per call over interleaved runs.
 *
 * @module
 */
import { createLoop, type Loop, type PriorityLevel } from '@flowing/core'
import { expectEqual, withDeadline } from './check.js'
import { type BenchMessages, checkLoopAtRest } from './flowing.js'
import { collect } from './gc.js'
import { median } from './stats.js'
import type { Workload } from './workload.js'

/** One `metrics()` case. */
export interface MetricsCase {
  /** Stable case id (`--only`). */
  readonly id: string
  /** Row label. */
  readonly label: string
  /** Whether the loop first processes the fill workload. */
  readonly filled: boolean
}

/** The two cases: a loop with filled histograms, and a fresh one. */
export const METRICS_CASES: readonly MetricsCase[] = [
  { id: 'metrics-filled', label: 'after the fill workload', filled: true },
  { id: 'metrics-fresh', label: 'fresh loop (nothing posted)', filled: false },
]

/** The figures of one case. */
export interface MetricsResult {
  readonly metricsCase: MetricsCase
  /** µs per call, one per run. */
  readonly samples: number[]
}

/** What {@link measureMetrics} needs. */
export interface MetricsPlan {
  /** Processed by the filled case's loop before its calls (random keys and priorities). */
  readonly fill: Workload
  /** Timed `metrics()` calls per run. */
  readonly calls: number
  readonly runs: number
  readonly deadlineMs: number
  log(line: string): void
}

async function openLoop(metricsCase: MetricsCase, plan: MetricsPlan): Promise<Loop<BenchMessages>> {
  const { fill } = plan
  const loop = createLoop<BenchMessages>({ capacity: Math.max(1, fill.n), workers: 8 })
  loop.on('tick', async () => {})
  if (!metricsCase.filled) return loop
  for (let i = 0; i < fill.n; i++) {
    loop.post('tick', i, { key: fill.keys[i] as number, priority: fill.priorities[i] as PriorityLevel })
  }
  await withDeadline(loop.drain(), plan.deadlineMs, () => `${metricsCase.id}: the fill workload did not drain`)
  checkLoopAtRest(metricsCase.id, loop, fill.n)
  const snapshot = loop.metrics()
  expectEqual(`${metricsCase.id}: queueWait.count`, snapshot.queueWait.count, fill.n)
  expectEqual(`${metricsCase.id}: handlerTime.count`, snapshot.handlerTime.count, fill.n)
  const levels = snapshot.queueWaitByPriority.filter((h) => h.count > 0).length
  expectEqual(`${metricsCase.id}: priority levels with queue waits recorded`, levels, 10)
  return loop
}

// Times `calls` snapshots; the posted counts are summed so the snapshots cannot be optimised away.
function timeCalls(loop: Loop<BenchMessages>, calls: number): { us: number; seen: number } {
  let seen = 0
  collect()
  const t0 = performance.now()
  for (let i = 0; i < calls; i++) seen += loop.metrics().counters.posted
  return { us: ((performance.now() - t0) * 1000) / calls, seen }
}

/** Interleaved runs of every case, each on a fresh loop. */
export async function measureMetrics(cases: readonly MetricsCase[], plan: MetricsPlan): Promise<MetricsResult[]> {
  const results: MetricsResult[] = cases.map((metricsCase) => ({ metricsCase, samples: [] }))
  for (let run = 1; run <= plan.runs; run++) {
    for (const r of results) {
      const loop = await openLoop(r.metricsCase, plan)
      timeCalls(loop, Math.min(plan.calls, 1000)) // warm-up
      const { us, seen } = timeCalls(loop, plan.calls)
      const posted = r.metricsCase.filled ? plan.fill.n : 0
      expectEqual(`${r.metricsCase.id}: sum of counters.posted over the calls`, seen, posted * plan.calls)
      await loop.stop()
      r.samples.push(us)
      plan.log(
        `  run ${run}/${plan.runs}  metrics() ${r.metricsCase.label.padEnd(28)} ${us.toFixed(2).padStart(7)} µs per call`,
      )
    }
  }
  return results
}

/** Median µs per call. */
export function metricsUs(result: MetricsResult): number {
  return median(result.samples)
}
