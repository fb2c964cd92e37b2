/**
 * `node dist/workloads.js [--smoke]`: @flowing/core alone over worker counts 1 … 32 on four workload
 * shapes (CPU-bound, I/O-bound, skewed keys, bursty mixed priorities), with fastq's promise API side by
 * side where it can do the same job (no keys, no priorities). Every run checks itself; a full run writes
 * `RESULTS-workloads.md` and the charts in `charts/`.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { classify, ms, perSecond, renderChart, type SweepPoint } from '@flowing/tune'
import { UsageError } from './lib/cli.js'
import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { describeShape, makeShape, runShape, type ShapeId, type ShapeSample, type SubjectId } from './lib/shapes.js'
import { renderTable } from './lib/table.js'

const USAGE = `Usage: node dist/workloads.js [options]

  --smoke   tiny sizes, workers 1 and 4: every code path and check in a few seconds (never fails on speed)
  --help    this text

A full run (no --smoke) writes benchmarks/RESULTS-workloads.md and benchmarks/charts/<workload>-{throughput,p99}.svg.`

const RESULTS_PATH = fileURLToPath(new URL('../RESULTS-workloads.md', import.meta.url))
const CHARTS_DIR = fileURLToPath(new URL('../charts/', import.meta.url))

/** One shape's plan: messages per run (full / smoke), warm-up size, and the subjects that can run it. */
interface Plan {
  readonly id: ShapeId
  readonly title: string
  readonly n: number
  readonly smokeN: number
  readonly warmupN: number
  readonly subjects: readonly SubjectId[]
}

const PLANS: readonly Plan[] = [
  { id: 'cpu-bound', title: 'CPU-bound', n: 30_000, smokeN: 1_000, warmupN: 2_000, subjects: ['flowing', 'fastq'] },
  { id: 'io-bound', title: 'I/O-bound', n: 3_000, smokeN: 150, warmupN: 200, subjects: ['flowing', 'fastq'] },
  { id: 'skewed-keys', title: 'Skewed keys', n: 200_000, smokeN: 10_000, warmupN: 20_000, subjects: ['flowing'] },
  {
    id: 'bursty-priorities',
    title: 'Mixed priorities, bursty arrivals',
    n: 100_000,
    smokeN: 10_000,
    warmupN: 5_000,
    subjects: ['flowing'],
  },
]

const FULL_WORKERS = [1, 2, 4, 8, 16, 32] as const
const SMOKE_WORKERS = [1, 4] as const
const LABEL: Record<SubjectId, string> = { flowing: 'Flowing', fastq: 'fastq promise' }

const log = (line = ''): void => {
  clearProgress()
  process.stdout.write(`${line}\n`)
}

let progressShown = false
/** One `\r`-updated line on stderr; cleared before anything else is printed. */
function progress(text: string): void {
  process.stderr.write(`\r\x1b[2K${text}`)
  progressShown = true
}
function clearProgress(): void {
  if (progressShown) process.stderr.write('\r\x1b[2K')
  progressShown = false
}

function bar(done: number, total: number, width = 24): string {
  const filled = Math.round((done / total) * width)
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`
}

const point = (s: ShapeSample): SweepPoint => ({
  workers: s.workers,
  throughput: s.throughput,
  p99: s.lifecycleP99,
  utilization: s.utilization,
})

/** A one-line note on the curve's shape (the tuner's classifier, this suite's words). */
function curveNote(samples: readonly ShapeSample[], cpuHandler: boolean): string {
  const sorted = [...samples].sort((a, b) => a.workers - b.workers)
  const first = sorted[0] as ShapeSample
  const last = sorted[sorted.length - 1] as ShapeSample
  const peak = sorted.reduce((best, s) => (s.throughput > best.throughput ? s : best))
  const gain =
    peak === first
      ? `peak at ${first.workers} worker${first.workers === 1 ? '' : 's'}`
      : `${(peak.throughput / first.throughput).toFixed(2)}× from ${first.workers} to ${peak.workers} workers`
  const tail = `${perSecond(last.throughput)} at ${last.workers} (${((last.throughput / peak.throughput) * 100).toFixed(0)} % of the peak)`
  switch (classify(sorted.map(point), 0.05)) {
    case 'flat-cpu':
      if (!cpuHandler) {
        return `flat, loop-bound: the event loop is ${Math.round(first.utilization * 100)} % busy at ${first.workers} worker${first.workers === 1 ? '' : 's'} with no-op handlers — the per-message cost of the loop itself is the limit, not the worker count (${gain}; ${tail})`
      }
      return `flat, CPU-bound: the event loop is ${Math.round(first.utilization * 100)} % busy at ${first.workers} worker${first.workers === 1 ? '' : 's'}, so more workers cannot help (${gain}; ${tail}); move the work to worker_threads`
    case 'flat-serial':
      return `flat: throughput does not depend on the worker count (${gain}; ${tail}) — bound by something else (arrival rate, a hot key, the loop's own cost)`
    case 'drop':
      return `rises then drops: peak ${perSecond(peak.throughput)} at ${peak.workers}, ${tail} — extra workers cost more than they bring`
    case 'scales':
      return `still scaling at ${last.workers} workers (${gain}): the last doubling still paid, larger counts may too`
    case 'plateau':
      return `rises, then plateaus: ${gain}, ${tail}`
  }
}

function shapeTable(samples: readonly ShapeSample[]): string {
  const base = new Map(samples.filter((s) => s.subject === 'flowing').map((s) => [s.workers, s.throughput]))
  const hasPeer = samples.some((s) => s.subject !== 'flowing')
  const columns = [
    { header: 'subject', align: 'left' },
    { header: 'workers', align: 'right' },
    { header: 'msg/s', align: 'right' },
    ...(hasPeer ? [{ header: '× Flowing', align: 'right' } as const] : []),
    { header: 'wait p50 ms', align: 'right' },
    { header: 'wait p99 ms', align: 'right' },
    { header: 'wait max ms', align: 'right' },
    { header: 'lifecycle p99 ms', align: 'right' },
    { header: 'loop delay p99 ms', align: 'right' },
    { header: 'loop busy', align: 'right' },
  ] as const
  const rows = samples.map((s) => {
    const ratio = s.throughput / (base.get(s.workers) ?? Number.NaN)
    return [
      LABEL[s.subject],
      String(s.workers),
      perSecond(s.throughput).replace('/s', ''),
      ...(hasPeer ? [Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '—'] : []),
      ms(s.queueWaitP50),
      ms(s.queueWaitP99),
      ms(s.queueWaitMax),
      ms(s.lifecycleP99),
      s.blocked ? `≥ ${ms(s.eventLoopDelayP99)}` : ms(s.eventLoopDelayP99),
      `${Math.round(s.utilization * 100)} %`,
    ]
  })
  return renderTable(columns, rows)
}

function notes(samples: readonly ShapeSample[], subjects: readonly SubjectId[]): string[] {
  return subjects.map(
    (subject) =>
      `${LABEL[subject]}: ${curveNote(
        samples.filter((s) => s.subject === subject),
        samples[0]?.shape === 'cpu-bound',
      )}`,
  )
}

/** The worker count with the best Flowing throughput, for the headline. */
function best(samples: readonly ShapeSample[]): ShapeSample {
  return samples
    .filter((s) => s.subject === 'flowing')
    .reduce((b, s) => (s.throughput > b.throughput ? s : b)) as ShapeSample
}

function writeCharts(plan: Plan, samples: readonly ShapeSample[]): string[] {
  mkdirSync(CHARTS_DIR, { recursive: true })
  const points = samples.filter((s) => s.subject === 'flowing').map(point)
  const knee = best(samples).workers
  const files: [string, string][] = [
    [
      `${plan.id}-throughput.svg`,
      renderChart(points, {
        title: `${plan.title}: Flowing throughput`,
        yLabel: 'messages / s',
        value: (p) => p.throughput,
        knee,
      }),
    ],
    [
      `${plan.id}-p99.svg`,
      renderChart(points, {
        title: `${plan.title}: Flowing lifecycle p99`,
        yLabel: 'post → settled p99 (ms)',
        value: (p) => p.p99,
        knee,
      }),
    ],
  ]
  for (const [name, svg] of files) writeFileSync(`${CHARTS_DIR}${name}`, svg.replace(/>knee</g, '>best<'))
  return files.map(([name]) => name)
}

interface Section {
  readonly plan: Plan
  readonly n: number
  readonly samples: ShapeSample[]
}

function renderResults(sections: readonly Section[], header: Record<string, string>, seconds: number): string {
  const parts = [
    '# Benchmark results — `workloads`',
    '',
    'Generated file: do not edit by hand; re-run the command below to refresh it. How to read it:',
    '[README.md](./README.md#what-workloads-measures). Figures drift 10–30 % run to run. The other suites:',
    '[RESULTS.md](./RESULTS.md), [RESULTS-timing-wheel.md](./RESULTS-timing-wheel.md), [RESULTS-flood.md](./RESULTS-flood.md).',
    '',
    ...Object.entries(header).map(([k, v]) => `- **${k}:** ${v}`),
    `- **Whole run:** ${seconds.toFixed(0)} s; one timed run per case (after one untimed warm-up per shape and subject)`,
    '',
    '## Headlines (Flowing, best worker count)',
    '',
    renderTable(
      [
        { header: 'workload', align: 'left' },
        { header: 'best workers', align: 'right' },
        { header: 'msg/s', align: 'right' },
        { header: 'lifecycle p99 ms', align: 'right' },
        { header: 'wait p99 ms', align: 'right' },
      ],
      sections.map(({ plan, samples }) => {
        const b = best(samples)
        return [plan.title, String(b.workers), perSecond(b.throughput), ms(b.lifecycleP99), ms(b.queueWaitP99)]
      }),
    ),
  ]
  for (const { plan, n, samples } of sections) {
    parts.push(
      '',
      `## ${plan.title}`,
      '',
      `${n.toLocaleString('en-US')} messages per run: ${describeShape(plan.id)}.`,
      '',
      shapeTable(samples),
      '',
      ...notes(samples, plan.subjects).map((line) => `- ${line}`),
      '',
      `![${plan.title} throughput](./charts/${plan.id}-throughput.svg) ![${plan.title} p99](./charts/${plan.id}-p99.svg)`,
    )
  }
  parts.push(
    '',
    '## Self-checks that passed',
    '',
    '- every run: each message ran exactly once (processed count = posted count); queue-wait and lifecycle histograms hold one recording per message',
    '- Flowing: `posted = accepted = succeeded = n`, no rejected/failed/dropped/cancelled, nothing left queued or running',
    '- skewed keys, bursty priorities: each key’s messages of equal priority started in post order',
    '',
  )
  return parts.join('\n')
}

async function main(argv: string[]): Promise<void> {
  let values: { smoke?: boolean; help?: boolean }
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: { smoke: { type: 'boolean' }, help: { type: 'boolean' } },
    }).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  if (values.help === true) {
    log(USAGE)
    return
  }
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const smoke = values.smoke === true
  const workers: readonly number[] = smoke ? SMOKE_WORKERS : FULL_WORKERS
  const deadlineMs = smoke ? 60_000 : 300_000
  const started = performance.now()
  const machine = describeMachine()
  const revision = codeRevision()
  log(
    `workloads${smoke ? ' --smoke' : ''}: workers ${workers.join(', ')}; Flowing alone, fastq promise API where it fits`,
  )
  log(`machine: ${formatMachine(machine)}`)
  const total = PLANS.reduce((sum, p) => sum + p.subjects.length * workers.length, 0)
  let done = 0
  const sections: Section[] = []
  for (const plan of PLANS) {
    const n = smoke ? plan.smokeN : plan.n
    const workload = makeShape(plan.id, n)
    if (!smoke) {
      const warm = makeShape(plan.id, plan.warmupN)
      for (const subject of plan.subjects) {
        progress(`${bar(done, total)}  ${plan.id}: warm-up ${LABEL[subject]}`)
        await runShape(warm, subject, 4, deadlineMs)
      }
    }
    const samples: ShapeSample[] = []
    for (const subject of plan.subjects) {
      for (const w of workers) {
        const elapsed = ((performance.now() - started) / 1000).toFixed(0)
        progress(`${bar(done, total)}  ${plan.id}: ${LABEL[subject]}, ${w} workers  (${elapsed} s)`)
        samples.push(await runShape(workload, subject, w, deadlineMs))
        done++
      }
    }
    clearProgress()
    sections.push({ plan, n, samples })
    log(`\n${plan.title} — ${n.toLocaleString('en-US')} messages: ${describeShape(plan.id)}\n`)
    log(shapeTable(samples))
    for (const line of notes(samples, plan.subjects)) log(`  ${line}`)
  }
  clearProgress()
  const seconds = (performance.now() - started) / 1000
  if (smoke) {
    log('\nSmoke run: figures from tiny sizes are not meaningful; only the checks count.')
  } else {
    const charts = sections.flatMap(({ plan, samples }) => writeCharts(plan, samples))
    writeFileSync(
      RESULTS_PATH,
      renderResults(
        sections,
        {
          Command: producingCommand(argv, 'workloads'),
          Code: `commit ${revision}`,
          Machine: formatMachine(machine),
          Date: new Date().toISOString(),
        },
        seconds,
      ),
    )
    log(`\nWrote ${RESULTS_PATH} and ${charts.length} charts in ${CHARTS_DIR}`)
  }
  log(`All self-checks passed (${seconds.toFixed(1)} s).`)
}

runSuite('workloads', USAGE, main)
