/**
 * The tuner pipeline, independent of the process: load (or take) a module, sweep, judge, report.
 *
 * @module
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { resolveTuneOptions, type TuneInput, type TuneOptions } from './args.js'
import { TuneError } from './errors.js'
import { checkLoopOptions } from './loop-options.js'
import { describeMachine } from './machine.js'
import { loadModule, type TunerModule } from './module.js'
import { createProgress, type Progress, silentProgress } from './progress.js'
import { buildReport, type Report, writeReport } from './report.js'
import { type MeasuredPoint, sweep } from './sweep.js'
import { judgeThreads, onThreadPool, type ThreadsRun, type ThreadsVerdict } from './threads.js'

/**
 * A finished tuning run.
 *
 * @group Tuning
 */
export interface TuneRun {
  /** The sweep's points (with `--threads`: the recommended thread count's, else the last count's). */
  readonly points: readonly MeasuredPoint[]
  /** The sweep's report (the same one as `points`). */
  readonly report: Report
  /** With `--threads`: every thread count's sweep and the verdict over them. */
  readonly threads?: { readonly runs: readonly ThreadsRun[]; readonly verdict: ThreadsVerdict }
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
  const counts = options.threads === undefined ? '' : ` × ${options.threads.join(', ')} threads`
  shown.line(
    `flowing-tune: sweeping ${options.workers.join(', ')} workers${counts} on ${options.module} (≈ ${estimate(options)} s)`,
  )
  if (options.threads !== undefined) return tuneThreads(handlers, options, options.threads, print, shown)
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

async function tuneThreads(
  handlers: TunerModule,
  options: TuneOptions,
  counts: readonly number[],
  print: (text: string) => void,
  shown: Progress,
): Promise<TuneRun> {
  const runs: ThreadsRun[] = []
  for (const threads of counts) {
    shown.line(`${threads} thread${threads === 1 ? '' : 's'}:`)
    const points = await onThreadPool(threads, () => sweep(handlers, options, shown, threads))
    runs.push({ threads, points, report: buildReport(points, options, describeMachine(), threads) })
  }
  const verdict = judgeThreads(runs, options)
  for (const run of runs) print(`\n## ${run.threads} thread${run.threads === 1 ? '' : 's'}\n\n${run.report.text}`)
  print(`\n${verdict.text}`)
  const files: string[] = []
  if (options.out !== undefined) {
    for (const run of runs) {
      files.push(...(await writeReport(options.out, run.report, run.points, options, `threads-${run.threads}-`)))
    }
    files.push(await writeSummary(options.out, verdict, runs))
    print(`\nWrote ${files.join(', ')}`)
  }
  const shownRun = runs.find((r) => r.threads === verdict.threads) ?? (runs[runs.length - 1] as ThreadsRun)
  if (verdict.threads === undefined)
    throw new TuneError('ERR_FLOWING_TUNE_NO_RECOMMENDATION', 'no thread count had a recommended worker count')
  return { points: shownRun.points, report: shownRun.report, threads: { runs, verdict }, files }
}

async function writeSummary(dir: string, verdict: ThreadsVerdict, runs: readonly ThreadsRun[]): Promise<string> {
  const file = path.join(dir, 'tune-report.md')
  const links = runs.map(
    (r) => `- [${r.threads} thread${r.threads === 1 ? '' : 's'}](./threads-${r.threads}-tune-report.md)`,
  )
  await writeFile(file, ['# Thread and worker sweep', '', verdict.text, '', ...links, ''].join('\n'))
  return file
}

function estimate(options: TuneOptions): string {
  const sweeps = options.threads?.length ?? 1
  const ms = sweeps * options.workers.length * (options.warmupMs + options.trials * options.durationMs)
  return (ms / 1000).toFixed(ms < 10_000 ? 1 : 0)
}
