/**
 * Command-line options of the scaling benchmark: the sizes of each dimension, full or smoke.
 *
 * @module
 */
import { parseSuiteArgs } from '../lib/cli.js'

/** Resolved options. */
export interface ScalingConfig {
  /** Tiny sizes, one run: every code path and check in a few seconds, never a verdict on speed. */
  readonly smoke: boolean
  /** Runs per point; tables and charts show the median. */
  readonly runs: number
  /** Write `benchmarks/RESULTS-scaling.md` and `benchmarks/charts/scaling-*.svg`. */
  readonly write: boolean
  /** Messages already queued when the drain starts. */
  readonly depths: readonly number[]
  /** Distinct keys of the streamed workload. */
  readonly keyCounts: readonly number[]
  /** Messages of the streamed distinct-keys workload. */
  readonly keyMessages: number
  /** Delayed messages pending on the wheel. */
  readonly delayedCounts: readonly number[]
  /** Messages of the plain streamed workload run beside the pending delayed ones. */
  readonly besideMessages: number
  /**
   * Operations a sample times at least: a size below it repeats with fresh loops (queue depth) or
   * fresh fills (`postDelayed()` / `cancel()`), times summed, so a small size rises above the noise.
   */
  readonly minOps: number
  /** Deadline of one drain: a lost message must fail the run, not hang it. */
  readonly deadlineMs: number
}

/** `--help` text. */
export const SCALING_USAGE = `Usage: node dist/scaling.js [options]

  --smoke        sizes up to 100k (keys 20k messages), 1 run: every code path and check in a few seconds
  --runs=<k>     runs per point, median reported (default 3; smoke 1)
  --write        write benchmarks/RESULTS-scaling.md and benchmarks/charts/scaling-*.svg
                 (default: on for a full run with the default runs)
  --help         this text`

/**
 * Parses `argv` (without node and script).
 * @returns the config, or `undefined` when `--help` was asked for
 * @throws UsageError for an unknown option or a bad value
 */
export function parseScalingCli(argv: readonly string[]): ScalingConfig | undefined {
  const args = parseSuiteArgs(argv)
  if (args === undefined) return undefined
  const { smoke, write } = args
  const runs = argv.some((a) => a.startsWith('--runs')) ? args.runs : smoke ? 1 : 3
  return {
    smoke,
    runs,
    write,
    depths: smoke ? [1000, 10_000, 100_000] : [1000, 10_000, 100_000, 1_000_000],
    keyCounts: smoke ? [10, 1000, 100_000] : [10, 1000, 100_000, 1_000_000],
    keyMessages: smoke ? 20_000 : 300_000,
    delayedCounts: smoke ? [1000, 10_000, 100_000] : [1000, 10_000, 100_000, 1_000_000],
    besideMessages: smoke ? 20_000 : 200_000,
    minOps: smoke ? 10_000 : 100_000,
    deadlineMs: smoke ? 60_000 : 300_000,
  }
}
