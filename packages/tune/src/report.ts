/**
 * The report: the evidence table, the recommendation and the explanation of the curve — printed, and
 * with `--out` written as `tune-report.md` next to the two SVG charts.
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { TuneOptions } from './args.js'
import { renderAsciiChart, renderChart } from './chart.js'
import { ms, perSecond, seconds, workerCount } from './format.js'
import {
  classify,
  explain,
  findKnee,
  type Knee,
  noisyCounts,
  type Shape,
  SPREAD_LIMIT,
  withdrawWhileScaling,
} from './knee.js'
import { formatMachineInfo, type MachineInfo } from './machine.js'
import { spread } from './stats.js'
import type { MeasuredPoint } from './sweep.js'
import { renderTable } from './table.js'

/**
 * The verdict and the text that shows it.
 *
 * @group Report
 */
export interface Report {
  readonly knee: Knee
  readonly shape: Shape
  /** Markdown: table, recommendation, explanation. */
  readonly text: string
}

/**
 * Builds the report of a finished sweep; `machine` is named in its first lines, and `threads` (with
 * `--threads`) the pool the sweep ran on.
 *
 * @group Report
 */
export function buildReport(
  points: readonly MeasuredPoint[],
  options: TuneOptions,
  machine?: MachineInfo,
  threads?: number,
): Report {
  const shape = classify(points, options.tolerance)
  const found = findKnee(points, options.tolerance, options.p99Ms)
  const knee = shape === 'scales' ? withdrawWhileScaling(found, points) : found
  const load =
    options.rate === undefined
      ? 'closed loop (2 × workers in flight)'
      : `open loop at ${options.rate.toLocaleString('en-US')} msg/s`
  const lines = [
    `Module \`${options.module}\`${threads === undefined ? '' : ` on ${threads} thread${threads === 1 ? '' : 's'}`} — ${load}; ${options.trials} trial${options.trials === 1 ? '' : 's'} of ${seconds(options.durationMs)} per count after a ${seconds(options.warmupMs)} warm-up; target p99 ≤ ${ms(options.p99Ms)} ms; tolerance ${Math.round(options.tolerance * 100)} %.`,
    ...(machine === undefined ? [] : [formatMachineInfo(machine)]),
    '',
    table(points, knee, options),
    '',
    '```text',
    renderAsciiChart(points, {
      title: 'throughput',
      yLabel: 'msg/s',
      value: (p) => p.throughput,
      range: (p) => whiskers(p.trialThroughputs),
    }),
    '```',
    '',
    knee.workers === undefined
      ? `**No recommendation:** ${knee.reason ?? ''}.`
      : `**Recommendation: ${workerCount(knee.workers)}** — the smallest count within ${Math.round(options.tolerance * 100)} % of the peak (${perSecond(knee.peak.throughput)} at ${workerCount(knee.peak.workers)}) whose p99 meets ${ms(options.p99Ms)} ms.`,
    '',
    explain(shape, points, options.tolerance, options.rate),
    ...warnings(points, options),
  ]
  return { knee, shape, text: lines.join('\n') }
}

/** The warnings under the explanation: noisy counts, failures, what the trial loops logged. */
function warnings(points: readonly MeasuredPoint[], options: TuneOptions): string[] {
  const out: string[] = []
  const noisy = noisyCounts(points)
  if (noisy.length > 0) {
    out.push(
      `Warning: the trials spread more than ${Math.round(SPREAD_LIMIT * 100)} % at ${noisy.map((n) => `${n.workers} (${Math.round(n.spread * 100)} %)`).join(', ')}: differences inside that spread are noise, not a shape. For a steadier run, use more or longer trials (--trials ${Math.max(5, options.trials + 2)} --duration ${seconds(options.durationMs * 2).replace(' ', '')}) on a quieter machine (nothing else running; load average below the core count).`,
    )
  }
  const failing = points.filter((p) => p.failureRate > 0)
  if (failing.length > 0) {
    out.push(
      `Warning: handlers failed for ${failing.map((p) => `${(p.failureRate * 100).toFixed(1)} % at ${p.workers}`).join(', ')}; throughput counts successes only.`,
    )
  }
  const logged = points.reduce((n, p) => n + p.logged, 0)
  const first = points.find((p) => p.firstLogged !== undefined)?.firstLogged
  if (logged > 0) {
    out.push(
      `The trial loops logged ${logged} line${logged === 1 ? '' : 's'} (new failure signatures; not printed during the sweep)${first === undefined ? '' : `, the first: ${first}`}.`,
    )
  }
  return out.length === 0 ? [] : ['', ...out]
}

function table(points: readonly MeasuredPoint[], knee: Knee, options: TuneOptions): string {
  const right = (header: string) => ({ header, align: 'right' as const })
  const columns = [
    right('workers'),
    right('msg/s'),
    right('× 1st'),
    right('spread'),
    right('lifecycle p50 ms'),
    right('lifecycle p99 ms'),
    right('wait p99 ms'),
    right('handler p50 ms'),
    right('loop delay p99 ms'),
    right('loop busy'),
    { header: '', align: 'left' as const },
  ]
  if (options.rate !== undefined) columns.splice(10, 0, right('refused'))
  const first = points[0]
  const rows = points.map((p) => {
    const notes = [
      p.workers === knee.workers ? '← knee' : '',
      p === knee.peak ? 'peak' : '',
      p.p99 > options.p99Ms ? 'p99 over target' : '',
    ].filter((s) => s !== '')
    const row = [
      String(p.workers),
      Math.round(p.throughput).toLocaleString('en-US'),
      first === undefined ? '' : `${(p.throughput / first.throughput).toFixed(2)}×`,
      p.trialThroughputs.length > 1 ? `${Math.round(spread(p.trialThroughputs) * 100)} %` : '—',
      ms(p.lifecycleP50),
      ms(p.p99),
      ms(p.queueWaitP99),
      ms(p.handlerP50),
      ms(p.eventLoopDelayP99),
      `${Math.round(p.utilization * 100)} %`,
      notes.join(', '),
    ]
    if (options.rate !== undefined) row.splice(10, 0, `${(p.refusedRate * 100).toFixed(1)} %`)
    return row
  })
  return renderTable(columns, rows)
}

/** Min and max of a count's trials, for the whiskers. */
function whiskers(values: readonly number[] | undefined): readonly [number, number] | undefined {
  return values === undefined || values.length === 0 ? undefined : [Math.min(...values), Math.max(...values)]
}

/**
 * Writes `tune-report.md`, `throughput.svg` and `p99.svg` into `dir`; returns the paths written.
 *
 * @group Report
 */
export async function writeReport(
  dir: string,
  report: Report,
  points: readonly MeasuredPoint[],
  options: TuneOptions,
  prefix = '',
): Promise<string[]> {
  await mkdir(dir, { recursive: true })
  const files = {
    report: path.join(dir, `${prefix}tune-report.md`),
    throughput: path.join(dir, `${prefix}throughput.svg`),
    p99: path.join(dir, `${prefix}p99.svg`),
  }
  const name = path.basename(options.module)
  await writeFile(
    files.throughput,
    renderChart(points, {
      title: `${name}: throughput vs workers`,
      yLabel: 'messages / s',
      value: (p) => p.throughput,
      range: (p) => whiskers(p.trialThroughputs),
      knee: report.knee.workers,
    }),
  )
  await writeFile(
    files.p99,
    renderChart(points, {
      title: `${name}: lifecycle p99 vs workers`,
      yLabel: 'p99 (ms)',
      value: (p) => p.p99,
      range: (p) => whiskers(p.trialP99s),
      reference: { value: options.p99Ms, label: `target ${ms(options.p99Ms)} ms` },
      knee: report.knee.workers,
    }),
  )
  const md = [
    `# Worker-count sweep: ${name}`,
    '',
    report.text,
    '',
    `![throughput](./${path.basename(files.throughput)})`,
    `![p99](./${path.basename(files.p99)})`,
    '',
  ].join('\n')
  await writeFile(files.report, md)
  return Object.values(files)
}
