/**
 * The interleaved timed runs shared by the throughput and the feature-cost tables: run 1 of every
 * case in every mode, then run 2 …, so drift in the machine hits all cases alike.
 *
 * @module
 */
import type { CaseResult } from './report.js'
import { formatRate } from './stats.js'
import { type Subject, timeRun } from './subject.js'
import type { Mode, Workload } from './workload.js'

/**
 * A case slower than this per run (p-queue's O(n) priority insert in burst: minutes per run) is run
 * once: more runs would cost minutes each to refine a figure that is orders of magnitude off anyway.
 */
export const SLOW_RUN_SECONDS = 60

/** What {@link measureInterleaved} needs besides the cases. */
export interface MeasurePlan {
  /** The workload every case runs. */
  readonly workload: Workload
  /** Runs per case and mode. */
  readonly runs: number
  /** The modes, in the order each run visits them. */
  readonly modes: readonly Mode[]
  /** Per-run deadline (ms). */
  readonly deadlineMs: number
  /** Progress lines. */
  readonly log: (line: string) => void
}

/**
 * Runs every subject `plan.runs` times in each mode, interleaved. A case whose run took over
 * {@link SLOW_RUN_SECONDS} is not run again.
 *
 * @throws BenchError when a run processed the wrong count (see {@link timeRun})
 */
export async function measureInterleaved(plan: MeasurePlan, subjects: readonly Subject[]): Promise<CaseResult[]> {
  const { workload, runs, log } = plan
  const results: CaseResult[] = subjects.map((subject) => ({ subject, burst: [], streamed: [] }))
  for (let run = 1; run <= runs; run++) {
    for (const mode of plan.modes) {
      for (const result of results) {
        const prefix = `  run ${run}/${runs}  ${mode.padEnd(8)}  ${result.subject.label.padEnd(38)}`
        if (result[mode].some((s) => s.seconds > SLOW_RUN_SECONDS)) {
          log(`${prefix} skipped: one run took > ${SLOW_RUN_SECONDS} s`)
          continue
        }
        const sample = await timeRun(result.subject, workload, mode, plan.deadlineMs)
        result[mode].push(sample)
        log(`${prefix} ${formatRate(workload.n / sample.seconds).padStart(7)} M msg/s`)
      }
    }
  }
  return results
}
