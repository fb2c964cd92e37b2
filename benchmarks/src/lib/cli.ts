/**
 * Command-line options of the throughput benchmark, and the options every timing suite shares.
 *
 * @module
 */
import { parseArgs } from 'node:util'

/** A bad command line: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Resolved options. */
export interface BenchConfig {
  /** Small N, one run, no speed expectations: the CI check that every code path still works. */
  readonly smoke: boolean
  /** Messages per run. */
  readonly n: number
  /** Runs per case; the tables show the median. */
  readonly runs: number
  /** Subject ids to run (substring match); empty = all. */
  readonly only: readonly string[]
  /** Write `benchmarks/RESULTS.md`. */
  readonly write: boolean
  /** Per-run deadline: a run that has not drained by then fails (a lost message must not hang CI). */
  readonly deadlineMs: number
}

/** `--help` text. */
export const USAGE = `Usage: node dist/core-throughput.js [options]

  --smoke        N = 20,000, 1 run: checks every code path in a few seconds (never fails on speed)
  --n=<count>    messages per run (default 1,000,000; smoke 20,000); also the refused tryPost calls
                 per run, and (up to 100,000) the messages processed before the filled metrics() case
  --runs=<k>     runs per case, median reported (default 3; smoke 1)
  --only=<ids>   comma-separated substrings of case ids, e.g. --only=flowing-levels-w8,fastq
                 (flowing-levels-w8 matches flowing-levels-w8-str too; feature-plain runs with any
                 other feature row, as their baseline)
  --write        write benchmarks/RESULTS.md (default: on for a full, unfiltered, default-N run)
  --help         this text

Case ids:
  throughput    flowing-levels-w1, flowing-levels-w4, flowing-levels-w8, flowing-levels-w8-str
                (string keys 'order-k'), flowing-heap-w8, fastq-promise, fastq-callback, p-queue,
                p-queue-priority
  feature cost  feature-plain, feature-key-int, feature-key-str, feature-idempotent,
                feature-timeout, feature-retry, feature-backpressure, feature-traces-all,
                feature-all-on
  refusals      refused-full, refused-shed, refused-duplicate
  metrics()     metrics-filled, metrics-fresh`

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    options: {
      smoke: { type: 'boolean', default: false },
      n: { type: 'string' },
      runs: { type: 'string' },
      only: { type: 'string' },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
}

/**
 * Reads `--<name>` as a positive integer (`_` separators allowed), `fallback` when absent.
 * @throws UsageError for anything else
 */
export function positiveInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  const value = Number(text.replaceAll('_', ''))
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`Expected \`--${name}\` to be a positive integer, got \`${text}\``)
  }
  return value
}

/**
 * Parses `argv` (without node and script).
 * @returns the config, or `undefined` when `--help` was asked for
 * @throws UsageError for an unknown option or a bad value
 */
export function parseCli(argv: readonly string[]): BenchConfig | undefined {
  let values: ReturnType<typeof parse>['values']
  try {
    values = parse(argv).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  if (values.help === true) return undefined
  const smoke = values.smoke === true
  const only = (values.only ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  const defaultRun = !smoke && values.n === undefined && values.runs === undefined && only.length === 0
  return {
    smoke,
    n: positiveInteger('n', values.n, smoke ? 20_000 : 1_000_000),
    runs: positiveInteger('runs', values.runs, smoke ? 1 : 3),
    only,
    write: values.write === true || defaultRun,
    deadlineMs: smoke ? 60_000 : 600_000,
  }
}

/** The options every timing suite shares: `--smoke`, `--runs=<k>`, `--write`, `--help`. */
export interface SuiteArgs {
  readonly smoke: boolean
  /** Runs per case: the flag's, or 1 for a smoke run and 5 for a full one. */
  readonly runs: number
  /** Write the RESULTS file: asked for, or a full run with the default runs. */
  readonly write: boolean
}

/**
 * Parses a timing suite's `argv` (without node and script).
 * @returns its options, or `undefined` when `--help` was asked for
 * @throws UsageError for an unknown option or a bad value
 */
export function parseSuiteArgs(argv: readonly string[]): SuiteArgs | undefined {
  let values: { smoke?: boolean; runs?: string; write?: boolean; help?: boolean }
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        smoke: { type: 'boolean' },
        runs: { type: 'string' },
        write: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  if (values.help === true) return undefined
  const smoke = values.smoke === true
  const runs = values.runs === undefined ? (smoke ? 1 : 5) : Number(values.runs)
  if (!Number.isSafeInteger(runs) || runs < 1) {
    throw new UsageError(`Expected \`--runs\` to be a positive integer, got \`${values.runs}\``)
  }
  return { smoke, runs, write: values.write === true || (!smoke && values.runs === undefined) }
}
