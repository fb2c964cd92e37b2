/**
 * Command-line options of the schedules benchmark (keyed delays and recurring schedules of
 * `@flowing/core`).
 *
 * @module
 */
import { parseSuiteArgs } from './cli.js'

/** Resolved options. */
export interface SchedulesBenchConfig {
  /** Tiny sizes, one run: every code path and check in a few seconds; never judges speed. */
  readonly smoke: boolean
  /** Delayed messages per per-operation run. */
  readonly n: number
  /** Runs per case, interleaved; tables show the median. */
  readonly runs: number
  /** `every` schedules registered (and plain delayed messages, their baseline). */
  readonly everyCount: number
  /** Cron schedules registered: as many as `everyCount` (compiled expressions are shared per zone and text). */
  readonly cronCount: number
  /** Schedules (or plain delayed messages) due at the same instant in the fire runs. */
  readonly fireCount: number
  /** Write `benchmarks/RESULTS-schedules.md`. */
  readonly write: boolean
}

/** `--help` text. */
export const SCHEDULES_USAGE = `Usage: node --expose-gc dist/schedules.js [options]

  --smoke        2,000 messages, 1 run: checks every code path in a few seconds
  --runs=<k>     runs per case, interleaved, median reported (default 5; smoke 1)
  --write        write benchmarks/RESULTS-schedules.md (default: on for a full run)
  --help         this text`

/**
 * Parses `argv` (without node and script).
 * @returns the config, or `undefined` when `--help` was asked for
 * @throws UsageError for an unknown option or a bad value
 */
export function parseSchedulesCli(argv: readonly string[]): SchedulesBenchConfig | undefined {
  const args = parseSuiteArgs(argv)
  if (args === undefined) return undefined
  const { smoke, runs, write } = args
  return {
    smoke,
    n: smoke ? 2_000 : 100_000,
    runs,
    everyCount: smoke ? 2_000 : 100_000,
    cronCount: smoke ? 200 : 100_000,
    fireCount: smoke ? 500 : 10_000,
    write,
  }
}
