/**
 * Sizing threads as well as workers (`--threads`): the worker sweep runs once per thread count on a
 * default `@flowing/threads` pool of that size; the verdict is the fewest threads whose recommended
 * worker count comes within the tolerance of the best one's throughput.
 *
 * @module
 */
import type { TuneOptions } from './args.js'
import { TuneError } from './errors.js'
import { ms, perSecond, workerCount } from './format.js'
import type { Report } from './report.js'
import type { MeasuredPoint } from './sweep.js'
import { renderTable } from './table.js'

/**
 * One thread count's sweep.
 *
 * @group Tuning
 */
export interface ThreadsRun {
  readonly threads: number
  readonly points: readonly MeasuredPoint[]
  readonly report: Report
}

/**
 * The verdict over thread counts.
 *
 * @group Tuning
 */
export interface ThreadsVerdict {
  /** The recommended thread count, or `undefined` when no count had a recommended worker count. */
  readonly threads: number | undefined
  /** The recommended worker count at that thread count. */
  readonly workers: number | undefined
  /** Markdown: the table of thread counts and the recommendation. */
  readonly text: string
}

interface ThreadsModule {
  readonly ThreadPool: new (options: { minThreads: number; maxThreads: number }) => { close(): Promise<void> }
  readonly setDefaultPool: (pool: unknown) => unknown
}

/**
 * Runs `sweep` with `@flowing/threads`' default pool sized to `threads` (all of them started, so the
 * warm-up need not), and puts the previous default back after, closing the trial's pool.
 * @throws TuneError when `@flowing/threads` cannot be loaded
 *
 * @group Tuning
 */
export async function onThreadPool<T>(threads: number, sweep: () => Promise<T>): Promise<T> {
  const { ThreadPool, setDefaultPool } = await importThreads()
  const pool = new ThreadPool({ minThreads: threads, maxThreads: threads })
  const before = setDefaultPool(pool)
  try {
    return await sweep()
  } finally {
    setDefaultPool(before)
    await pool.close()
  }
}

function renderThreads(
  knees: readonly { run: ThreadsRun; point: MeasuredPoint | undefined }[],
  chosen: ThreadsRun | undefined,
): string {
  const right = (header: string) => ({ header, align: 'right' as const })
  return renderTable(
    [
      right('threads'),
      right('workers'),
      right('msg/s'),
      right('lifecycle p99 ms'),
      right('loop delay p99 ms'),
      right('loop busy'),
      { header: '', align: 'left' },
    ],
    knees.map(({ run, point }) =>
      point === undefined
        ? [String(run.threads), '—', '—', '—', '—', '—', 'no recommended worker count']
        : [
            String(run.threads),
            String(point.workers),
            Math.round(point.throughput).toLocaleString('en-US'),
            ms(point.p99),
            ms(point.eventLoopDelayP99),
            `${Math.round(point.utilization * 100)} %`,
            chosen === run ? '← recommended' : '',
          ],
    ),
  )
}

async function importThreads(): Promise<ThreadsModule> {
  try {
    return (await import('@flowing/threads')) as unknown as ThreadsModule
  } catch (error) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_USAGE',
      '--threads sizes @flowing/threads, which could not be loaded (npm i @flowing/threads)',
      { cause: error },
    )
  }
}

/**
 * The fewest threads whose recommended worker count reaches within `options.tolerance` of the best
 * recommended throughput across thread counts — threads past it buy nothing but cores the loop and
 * other processes could use.
 *
 * @group Tuning
 */
export function judgeThreads(runs: readonly ThreadsRun[], options: TuneOptions): ThreadsVerdict {
  const knees = runs.map((run) => ({ run, point: run.points.find((p) => p.workers === run.report.knee.workers) }))
  const met = knees.filter((k) => k.point !== undefined) as { run: ThreadsRun; point: MeasuredPoint }[]
  const best = met.reduce<number>((top, k) => Math.max(top, k.point.throughput), 0)
  const chosen = met.find((k) => k.point.throughput >= best * (1 - options.tolerance))
  const table = renderThreads(knees, chosen?.run)
  const verdict =
    chosen === undefined
      ? `**No recommendation:** no thread count had a worker count within ${Math.round(options.tolerance * 100)} % of its peak meeting p99 ≤ ${ms(options.p99Ms)} ms.`
      : `**Recommendation: ${chosen.run.threads} thread${chosen.run.threads === 1 ? '' : 's'} and ${workerCount(chosen.point.workers)}** — the fewest threads whose recommended worker count (${perSecond(chosen.point.throughput)}) is within ${Math.round(options.tolerance * 100)} % of the best across thread counts (${perSecond(best)}): \`new ThreadPool({ maxThreads: ${chosen.run.threads} })\` and \`createLoop({ workers: ${chosen.point.workers} })\`.`
  return {
    threads: chosen?.run.threads,
    workers: chosen?.point.workers,
    text: [
      '## Threads',
      '',
      "Each thread count's recommended worker count (see its sweep above):",
      '',
      table,
      '',
      verdict,
    ].join('\n'),
  }
}
