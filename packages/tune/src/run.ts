/**
 * The tuner pipeline, independent of the process: load (or take) a module, sweep, judge, report.
 *
 * @module
 */
import { resolveTuneOptions, type TuneInput, type TuneOptions } from './args.js'
import { TuneError } from './errors.js'
import { checkLoopOptions } from './loop-options.js'
import { describeMachine } from './machine.js'
import { loadModule, type TunerModule } from './module.js'
import { createProgress, type Progress, silentProgress } from './progress.js'
import { buildReport, type Report, writeReport } from './report.js'
import { type MeasuredPoint, sweep } from './sweep.js'

/**
 * A finished tuning run.
 *
 * @group Tuning
 */
export interface TuneRun {
  readonly points: readonly MeasuredPoint[]
  readonly report: Report
  /** Files written (with `--out`). */
  readonly files: readonly string[]
}

/**
 * Runs a sweep on `options.module` (or on `mod` when given) and prints the report through `print`;
 * progress goes to `progress` (default: stderr, a bar on a terminal; none with `quiet`). Options left
 * out get the command line's defaults.
 * @throws InvalidLoopOptionsError before the sweep when the module's `loopOptions` cannot build a loop
 * @throws TuneError for anything else the user can fix; the report is printed (and written) first when
 * the sweep finished but recommends nothing
 *
 * @group Tuning
 */
export async function tune(
  input: TuneInput,
  print: (text: string) => void = (text) => process.stdout.write(`${text}\n`),
  mod?: TunerModule,
  progress?: Progress,
): Promise<TuneRun> {
  const options = resolveTuneOptions(input)
  const handlers = mod ?? (await loadModule(options.module))
  await checkLoopOptions(handlers, options.workers[0] ?? 1, options.capacity)
  const shown = progress ?? (options.quiet ? silentProgress : createProgress(process.stderr))
  shown.line(
    `flowing-tune: sweeping ${options.workers.join(', ')} workers on ${options.module} (≈ ${estimate(options)} s)`,
  )
  const points = await sweep(handlers, options, shown)
  const report = buildReport(points, options, describeMachine())
  print('')
  print(report.text)
  const files = options.out === undefined ? [] : await writeReport(options.out, report, points, options)
  if (files.length > 0) print(`\nWrote ${files.join(', ')}`)
  if (report.knee.workers === undefined)
    throw new TuneError('ERR_FLOWING_TUNE_NO_RECOMMENDATION', report.knee.reason ?? 'no recommendation')
  return { points, report, files }
}

function estimate(options: TuneOptions): string {
  const ms = options.workers.length * (options.warmupMs + options.trials * options.durationMs)
  return (ms / 1000).toFixed(ms < 10_000 ? 1 : 0)
}
