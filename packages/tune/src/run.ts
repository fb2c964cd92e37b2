/**
 * The tuner pipeline, independent of the process: load (or take) a module, sweep, judge, report.
 *
 * @module
 */
import type { TuneOptions } from './args.js'
import { TuneError } from './errors.js'
import { loadModule, type TunerModule } from './module.js'
import { buildReport, type Report, writeReport } from './report.js'
import { type MeasuredPoint, sweep } from './sweep.js'

/** A finished tuning run. */
export interface TuneRun {
  readonly points: readonly MeasuredPoint[]
  readonly report: Report
  /** Files written (with `--out`). */
  readonly files: readonly string[]
}

/**
 * Runs a sweep on `options.module` (or on `mod` when given, for tests) and prints progress and the
 * report through `print`.
 * @throws TuneError for anything the user can fix; the report is printed (and written) first when the
 * sweep finished but no count meets the target
 */
export async function tune(options: TuneOptions, print: (text: string) => void, mod?: TunerModule): Promise<TuneRun> {
  const handlers = mod ?? (await loadModule(options.module))
  const progress = options.quiet ? () => {} : print
  progress(
    `flowing-tune: sweeping ${options.workers.join(', ')} workers on ${options.module} (≈ ${estimate(options)} s)`,
  )
  const points = await sweep(handlers, options, progress)
  const report = buildReport(points, options)
  print('')
  print(report.text)
  const files = options.out === undefined ? [] : await writeReport(options.out, report, points, options)
  if (files.length > 0) print(`\nWrote ${files.join(', ')}`)
  if (report.knee.workers === undefined) throw new TuneError(report.knee.reason ?? 'no recommendation')
  return { points, report, files }
}

function estimate(options: TuneOptions): string {
  const ms = options.workers.length * (options.warmupMs + options.trials * options.durationMs)
  return (ms / 1000).toFixed(ms < 10_000 ? 1 : 0)
}
