/**
 * Autoscaler convergence on the tuner's example workloads (`benchmarks/examples`): each runs in a loop
 * with `workers: { min: 1, max: 128 }` under a steady backlog, and the result — the size it settles at,
 * the time it took, the throughput there — is set against the knee `flowing-tune` reports for the
 * same workload. Writes `RESULTS-autoscale.md` and one SVG chart per workload into `charts/`.
 *
 *     node benchmarks/dist/autoscale.js [--seconds 40] [--tune-dir DIR] [--smoke]
 *
 * `--tune-dir` holds `flowing-tune` outputs named `<workload>.txt`; without it the ratios are blank.
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { createLoop, type WorkersChange } from '@flowing/core'
import { loadModule } from '@flowing/tune'
import { renderWorkersChart } from './autoscale/chart.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'

const WORKLOADS = ['io-bound', 'cpu-bound', 'shared-lock'] as const
const ROOT = fileURLToPath(new URL('..', import.meta.url))
// Messages kept waiting: enough that the backlog never empties while the pool grows.
const BACKLOG = 2000

interface Tuned {
  readonly knee: number
  readonly peak: number
}

interface Run {
  readonly workload: string
  readonly changes: readonly WorkersChange[]
  readonly final: number
  readonly convergedAt: number // seconds since start: the last change
  readonly throughput: number // completed/s over the last quarter of the run
  readonly seconds: number
}

function parseArgs(argv: readonly string[]): { seconds: number; tuneDir: string | undefined; smoke: boolean } {
  const at = (flag: string): string | undefined => {
    const i = argv.indexOf(flag)
    return i < 0 ? undefined : argv[i + 1]
  }
  const smoke = argv.includes('--smoke')
  return { seconds: Number(at('--seconds') ?? (smoke ? 3 : 40)), tuneDir: at('--tune-dir'), smoke }
}

// The tuner's recommendation and its peak throughput, from its printed report.
function readTuned(dir: string | undefined, workload: string): Tuned | undefined {
  const file = dir === undefined ? '' : `${dir}/${workload}.txt`
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, 'utf8')
  const knee = /Recommendation: (\d+) workers/.exec(text)?.[1]
  const peak = /peak \(([\d,]+)\/s at/.exec(text)?.[1]
  if (knee === undefined || peak === undefined) return undefined
  return { knee: Number(knee), peak: Number(peak.replaceAll(',', '')) }
}

async function runWorkload(workload: string, seconds: number): Promise<Run> {
  const module = await loadModule(`${ROOT}/examples/${workload}.ts`)
  const loop = createLoop({
    capacity: 4 * BACKLOG,
    logger: false,
    workers: { min: 1, max: 128, intervalMs: 250, cooldownMs: 750 },
  })
  module.register(loop as never, { workers: 128 }) // the autoscaler's most
  const changes: WorkersChange[] = []
  const started = performance.now()
  loop.events.on('workers', (c) => changes.push({ ...c, at: (c.at - started) / 1000 }))
  let i = 0
  const fill = (): void => {
    while (loop.metrics().gauges.queued < BACKLOG) {
      const s = module.sample(i++)
      loop.post(s.type as never, s.payload as never, s.key === undefined ? undefined : { key: s.key })
    }
  }
  const filler = setInterval(fill, 2)
  fill()
  const quarterAt = seconds * 750
  let quarterDone = 0
  await new Promise((resolve) => setTimeout(resolve, quarterAt))
  quarterDone = loop.metrics().counters.succeeded
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000 - quarterAt))
  const throughput = (loop.metrics().counters.succeeded - quarterDone) / (seconds / 4)
  clearInterval(filler)
  const final = loop.metrics().gauges.workers
  await loop.stop({ deadlineMs: 0 })
  const convergedAt = changes.at(-1)?.at ?? 0
  return { workload, changes, final, convergedAt, throughput, seconds }
}

function row(run: Run, tuned: Tuned | undefined): string {
  const ratio = tuned === undefined ? 'n/a' : `${(run.final / tuned.knee).toFixed(2)}×`
  const within = tuned === undefined ? 'n/a' : Math.abs(run.final / tuned.knee - 1) <= 0.1 ? 'yes' : '**no**'
  const tput = tuned === undefined ? 'n/a' : `${(run.throughput / tuned.peak).toFixed(2)}×`
  return `| ${run.workload} | ${tuned?.knee ?? 'n/a'} | ${run.final} | ${ratio} | ${within} | ${run.convergedAt.toFixed(1)} s | ${run.changes.length} | ${Math.round(run.throughput)} /s | ${tuned?.peak ?? 'n/a'} /s | ${tput} |`
}

// Every workload whose converged count is more than 10 % from the tuner's knee, with its figures.
function verdict(runs: readonly Run[], dir: string | undefined): string {
  const lines: string[] = []
  for (const run of runs) {
    const tuned = readTuned(dir, run.workload)
    if (tuned === undefined) lines.push(`- **${run.workload}**: no tuner figures (--tune-dir): not compared.`)
    else if (Math.abs(run.final / tuned.knee - 1) > 0.1) {
      lines.push(
        `- **${run.workload}**: did **not** converge within 10 % of the knee: ${run.final} workers against ${tuned.knee} (${(run.final / tuned.knee).toFixed(2)}×), throughput ${(run.throughput / tuned.peak).toFixed(2)}× the tuner's peak.`,
      )
    } else lines.push(`- **${run.workload}**: within 10 % of the knee (${run.final} against ${tuned.knee}).`)
  }
  return lines.join('\n')
}

function history(run: Run): string {
  return run.changes.map((c) => `${c.at.toFixed(1)} s ${c.from}→${c.to} (${c.reason})`).join(', ')
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const load = loadavg()
  const revision = codeRevision() // before the charts are rewritten: they are tracked files
  const runs: Run[] = []
  for (const w of args.smoke ? (['io-bound'] as const) : WORKLOADS) runs.push(await runWorkload(w, args.seconds))
  for (const run of runs) {
    if (run.throughput <= 0) throw new Error(`${run.workload}: nothing completed`)
    if (run.final < 1 || run.final > 128) throw new Error(`${run.workload}: ${run.final} workers is outside [1, 128]`)
  }
  const table = [
    '| workload | tuner knee | converged | ratio | within 10 % | last change | changes | throughput (last ¼) | tuner peak | throughput ratio |',
    '|---|--:|--:|--:|:-:|--:|--:|--:|--:|--:|',
    ...runs.map((r) => row(r, readTuned(args.tuneDir, r.workload))),
  ].join('\n')
  console.log(table)
  if (args.smoke) return
  mkdirSync(`${ROOT}/charts`, { recursive: true })
  for (const run of runs) {
    const points: [number, number][] = [
      [0, 1],
      ...run.changes.map((c) => [c.at, c.to] as [number, number]),
      [run.seconds, run.final],
    ]
    const svg = renderWorkersChart(
      `${run.workload}: workers over time`,
      points,
      readTuned(args.tuneDir, run.workload)?.knee,
    )
    writeFileSync(`${ROOT}/charts/autoscale-${run.workload}.svg`, svg)
  }
  const doc = `# Benchmark results — \`autoscale\`

Generated file: re-run the command below to refresh it. Each workload of \`benchmarks/examples\` runs for
${args.seconds} s in a loop with \`workers: { min: 1, max: 128, intervalMs: 250, cooldownMs: 750 }\`, a
producer keeping ${BACKLOG} messages waiting. *Converged* is the worker count at the end, *last change*
the time of the last resize; throughput is measured over the last quarter of the run and set against the
peak of the \`flowing-tune\` sweep of the same workload (run just before, same machine).

- **Command:** ${producingCommand(process.argv.slice(2), 'autoscale')}
- **Tuner:** \`flowing-tune examples/<workload>.ts --workers 1,2,4,6,8,12,16,20,24,32,48,64 --duration 2s --trials 2\`
- **Code:** commit ${revision}
- **Machine:** ${formatMachine(describeMachine())}; load average at start ${load.map((l) => l.toFixed(2)).join(' / ')} (other work shares the 2 cores)
- **Date:** ${new Date().toISOString()}

${table}

## Verdict

${verdict(runs, args.tuneDir)}

A knee is a point of the tuner's sweep (…, 4, 6, 8, 12, 16, …): on a flat or gently sloped curve a
neighbouring count is as good within the tuner's 5 % tolerance, so the throughput ratio says more
than the count ratio there.

## Changes

${runs.map((r) => `- **${r.workload}**: ${history(r) || 'none'}`).join('\n')}

## Charts

${runs.map((r) => `![${r.workload}](./charts/autoscale-${r.workload}.svg)`).join('\n')}
`
  writeFileSync(`${ROOT}/RESULTS-autoscale.md`, doc)
}

await main()
