/**
 * Command-line options of the timing-wheel benchmark.
 *
 * @module
 */
import { parseSuiteArgs } from './cli.js'

/** Resolved options. */
export interface WheelBenchConfig {
  /** Small sizes, one run, short real-clock runs: every code path and check in a few seconds. */
  readonly smoke: boolean
  /** Pending-timer counts to measure. */
  readonly sizes: readonly number[]
  /** Runs per virtual-clock case; tables show the median. */
  readonly runs: number
  /** Delay spread of the real-clock runs (ms), and their timer count for the light-load lateness row. */
  readonly realSpreadMs: number
  readonly lightLoad: number
  /** Write `benchmarks/RESULTS-timing-wheel.md`. */
  readonly write: boolean
  /** Deadline of a real-clock run: a lost timer must fail the run, not hang it. */
  readonly deadlineMs: number
}

/** `--help` text. */
export const WHEEL_USAGE = `Usage: node dist/timing-wheel.js [options]

  --smoke        10k timers, 1 run, short real-clock runs: checks every code path in a few seconds
  --runs=<k>     runs per virtual-clock case, median reported (default 5; smoke 1)
  --write        write benchmarks/RESULTS-timing-wheel.md (default: on for a full run)
  --help         this text`

/**
 * Parses `argv` (without node and script).
 * @returns the config, or `undefined` when `--help` was asked for
 * @throws UsageError for an unknown option or a bad value
 */
export function parseWheelCli(argv: readonly string[]): WheelBenchConfig | undefined {
  const args = parseSuiteArgs(argv)
  if (args === undefined) return undefined
  const { smoke, runs, write } = args
  return {
    smoke,
    sizes: smoke ? [10_000] : [100_000, 1_000_000],
    runs,
    realSpreadMs: smoke ? 300 : 2000,
    lightLoad: smoke ? 1000 : 10_000,
    write,
    deadlineMs: smoke ? 60_000 : 300_000,
  }
}
