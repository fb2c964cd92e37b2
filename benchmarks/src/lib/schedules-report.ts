/**
 * The schedules benchmark's tables — per-operation costs, many registered schedules, fires — each
 * with ratios to the plain delayed message of the same run, and `benchmarks/RESULTS-schedules.md`.
 *
 * @module
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { formatMachine, type Machine } from './machine.js'
import type { FireCase, ManyCase, ManySample } from './schedules-many.js'
import type { OpsCase } from './schedules-ops.js'
import { formatCount, formatRatio, median } from './stats.js'
import { renderTable } from './table.js'

/** Every run of one operation: ns per operation. */
export interface OpsResult {
  readonly kind: OpsCase
  readonly n: number
  readonly samples: number[]
}

/** Every run of one registration case. */
export interface ManyResult {
  readonly kind: ManyCase
  readonly count: number
  readonly samples: ManySample[]
}

/** Every run of one fire case: µs per fire. */
export interface FireResult {
  readonly kind: FireCase
  readonly count: number
  readonly samples: number[]
}

const ns = (v: number): string => (Number.isFinite(v) ? v.toFixed(0) : '—')
const us = (v: number): string => {
  if (!Number.isFinite(v)) return '—'
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)
}
const ratio = (v: number, base: number): string => formatRatio(v / base)

/** Median ns/op per operation, the spread of the runs, and the ratio to the plain `postDelayed`. */
export function opsTable(results: readonly OpsResult[]): string {
  const base = median(results[0]?.samples ?? [])
  const rows = results.map((r) => {
    const m = median(r.samples)
    return [
      r.kind,
      formatCount(r.n),
      ns(m),
      `${ns(Math.min(...r.samples))} – ${ns(Math.max(...r.samples))}`,
      ratio(m, base),
    ]
  })
  return renderTable(
    [
      { header: 'operation', align: 'left' },
      { header: 'messages', align: 'right' },
      { header: 'ns / op (median)', align: 'right' },
      { header: 'runs min – max', align: 'right' },
      { header: '× plain postDelayed', align: 'right' },
    ],
    rows,
  )
}

/** Registration time, heap and `list()` per schedule, with ratios to plain delayed messages. */
export function manyTable(results: readonly ManyResult[]): string {
  const of = (r: ManyResult | undefined, key: keyof ManySample, per: number): number =>
    r === undefined ? Number.NaN : median(r.samples.map((s) => s[key])) * per
  const base = results[0]
  const rows = results.map((r) => {
    const register = of(r, 'registerMs', 1000 / r.count)
    const bytes = of(r, 'bytes', 1)
    return [
      r.kind,
      formatCount(r.count),
      us(register),
      ratio(register, of(base, 'registerMs', 1000 / (base?.count ?? 1))),
      bytes.toFixed(0),
      ratio(bytes, of(base, 'bytes', 1)),
      us(of(r, 'listMs', 1000 / r.count)),
    ]
  })
  return renderTable(
    [
      { header: 'registered', align: 'left' },
      { header: 'count', align: 'right' },
      { header: 'register µs each', align: 'right' },
      { header: 'time × plain', align: 'right' },
      { header: 'heap B each', align: 'right' },
      { header: 'heap × plain', align: 'right' },
      { header: 'list() µs each', align: 'right' },
    ],
    rows,
  )
}

/** Wall µs per fire (a fire of a schedule posts its next), with the ratio to a plain delayed message. */
export function fireTable(results: readonly FireResult[]): string {
  const base = median(results[0]?.samples ?? [])
  const rows = results.map((r) => {
    const m = median(r.samples)
    return [r.kind, formatCount(r.count), us(m), ratio(m, base)]
  })
  return renderTable(
    [
      { header: 'due at once', align: 'left' },
      { header: 'count', align: 'right' },
      { header: 'µs per fire (wall)', align: 'right' },
      { header: '× plain delayed', align: 'right' },
    ],
    rows,
  )
}

/** Where the results go: `benchmarks/RESULTS-schedules.md`. */
export const SCHEDULES_RESULTS_PATH = fileURLToPath(new URL('../../RESULTS-schedules.md', import.meta.url))

/** The sections of one run, already rendered. */
export interface SchedulesResultsDocument {
  readonly command: string
  readonly machine: Machine
  readonly revision: string
  readonly date: Date
  readonly workload: string
  readonly ops: string
  readonly many: string
  readonly fire: string
  readonly notes: readonly string[]
  readonly checks: readonly string[]
  readonly seconds: number
}

/** The title, how to read the file, and the run's command, code, machine, date and workload. */
function renderHeader(doc: SchedulesResultsDocument): string {
  return `# Benchmark results — \`schedules\`

Generated file: do not edit by hand; re-run the command below to refresh it. How to read it:
[README.md](./README.md). The machine has 2 cores and other work may have
run beside the benchmark: figures drift 10–30 % run to run, so compare the **ratios** to the plain
\`postDelayed\` within this file, never absolute figures across machines or runs. The guide:
[Schedules and delays](../docs/guides/schedules-and-delays.md).

- **Command:** ${doc.command}
- **Code:** commit ${doc.revision}
- **Machine:** ${formatMachine(doc.machine)}
- **Date:** ${doc.date.toISOString()} (whole run: ${doc.seconds.toFixed(0)} s)
- **Workload:** ${doc.workload}
`
}

/** Renders the document. */
export function renderSchedulesResults(doc: SchedulesResultsDocument): string {
  return `${renderHeader(doc)}
## Keyed delays: per operation

Median ns per operation over the interleaved runs, each run on a fresh loop (\`VirtualClock\`,
\`autoStart: false\`: nothing fires or runs while timed), after a full collection. Every post's
handle is pushed into a plain array (setTimeout's too). Job keys are \`payment-timeout:order-<i>\`,
built anew before each timed section, so no string hash is cached. Cancels and replacing posts go in
a random order. *Replace* rows: n keyed messages wait (posted untimed, in the same mode), then n posts
with their keys replace them (each replaced message is cancelled).

${doc.ops}

## Many schedules

One idle loop per case: the time to register all, the heap they hold (\`heapUsed\` after \`gc()\`, minus
the empty loop's, per item: the message of the next fire, its state, the spec, the id; a compiled cron
expression is shared, see the notes), and \`loop.schedules.list()\` over all of them. The plain row is
\`postDelayed\` with delays 1 s – 60 s.

${doc.many}

## Fire

All due at once, 60 s after the start, in a started loop with a no-op handler: wall time of one
\`await clock.advance(60_000)\` on the \`VirtualClock\`, per fire — the wheel hands the message to the
queue, the handler runs, and a schedule's fire posts its next (its idempotency key, headers, the next
due time).

${doc.fire}

## Notes

${doc.notes.map((line) => `- ${line}`).join('\n')}

## Self-checks that passed

${doc.checks.map((line) => `- ${line}`).join('\n')}
`
}

/** Writes {@link SCHEDULES_RESULTS_PATH}. */
export function writeSchedulesResults(doc: SchedulesResultsDocument): string {
  writeFileSync(SCHEDULES_RESULTS_PATH, renderSchedulesResults(doc))
  return SCHEDULES_RESULTS_PATH
}
