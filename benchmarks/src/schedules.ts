import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { parseSchedulesCli, SCHEDULES_USAGE, type SchedulesBenchConfig } from './lib/schedules-cli.js'
import { CRON_EXPRESSIONS, FIRE_CASES, fireRun, MANY_CASES, registerRun } from './lib/schedules-many.js'
import { DELAY_LABEL, keyedWorkload, MAX_WAIT_MS, OPS_CASES, OPS_GROUPS, type OpsCase } from './lib/schedules-ops.js'
import {
  type FireResult,
  fireTable,
  type ManyResult,
  manyTable,
  type OpsResult,
  opsTable,
  writeSchedulesResults,
} from './lib/schedules-report.js'
import { formatCount, formatRatio, median } from './lib/stats.js'

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

/** Every group once at a tenth of the size, discarded: the first timed run then meets warm code. */
function warmUp(config: SchedulesBenchConfig): void {
  const w = keyedWorkload(Math.max(200, Math.floor(config.n / 10)), 0x5c00)
  for (const group of OPS_GROUPS) group.run(w)
}

/** Per-operation costs: every group once per run, runs interleaved so drift hits all alike. */
function measureOps(config: SchedulesBenchConfig): OpsResult[] {
  const w = keyedWorkload(config.n, 0x5c01)
  const byKind = new Map<OpsCase, OpsResult>(OPS_CASES.map((kind) => [kind, { kind, n: w.n, samples: [] }]))
  for (let run = 1; run <= config.runs; run++) {
    for (const group of OPS_GROUPS) {
      const ms = group.run(w)
      const cells = group.cases.map((kind, i) => {
        const perOp = ((ms[i] as number) * 1e6) / w.n
        byKind.get(kind)?.samples.push(perOp)
        return `${kind} ${perOp.toFixed(0)} ns`
      })
      log(`  run ${run}/${config.runs}  ${cells.join(', ')}`)
    }
  }
  return OPS_CASES.map((kind) => byKind.get(kind) as OpsResult)
}

/** Registration, heap and `list()`: every case once per run, interleaved. */
function measureMany(config: SchedulesBenchConfig): ManyResult[] {
  const results: ManyResult[] = MANY_CASES.map((kind) => ({
    kind,
    count: kind === MANY_CASES[2] ? config.cronCount : config.everyCount,
    samples: [],
  }))
  for (let run = 1; run <= config.runs; run++) {
    for (const r of results) {
      const s = registerRun(r.kind, r.count)
      r.samples.push(s)
      const list = Number.isNaN(s.listMs) ? '' : `, list() ${((s.listMs * 1000) / r.count).toFixed(2)} µs`
      log(
        `  run ${run}/${config.runs}  ${formatCount(r.count).padStart(7)} ${r.kind}: ${((s.registerMs * 1000) / r.count).toFixed(2)} µs, ${s.bytes.toFixed(0)} B${list} each`,
      )
    }
  }
  return results
}

/** Fires: every case once per run, interleaved. */
async function measureFire(config: SchedulesBenchConfig): Promise<FireResult[]> {
  const results: FireResult[] = FIRE_CASES.map((kind) => ({ kind, count: config.fireCount, samples: [] }))
  for (let run = 1; run <= config.runs; run++) {
    for (const r of results) {
      const perFire = ((await fireRun(r.kind, r.count)) * 1000) / r.count
      r.samples.push(perFire)
      log(
        `  run ${run}/${config.runs}  ${formatCount(r.count).padStart(7)} ${r.kind}: ${perFire.toFixed(2)} µs per fire`,
      )
    }
  }
  return results
}

/** The cron note: heap per cron schedule beside an `every` one, and what run 1 (which compiled the expressions) held more. */
function cronNote(many: readonly ManyResult[]): string {
  const [every, cron] = [many[1], many[2]]
  const bytesOf = (r: ManyResult | undefined): number[] => r?.samples.map((s) => s.bytes) ?? []
  const [cronBytes, everyBytes] = [median(bytesOf(cron)), median(bytesOf(every))]
  const count = cron?.count ?? 0
  const first = bytesOf(cron)[0] ?? Number.NaN
  const perExpression = ((first - cronBytes) * count) / CRON_EXPRESSIONS / 1024
  const runs = bytesOf(cron).length
  const reuse =
    runs > 1
      ? 'compiled in the first run and found compiled by the later ones'
      : 'compiled in this one run, so counted in its figure'
  const compiled =
    runs > 1 && perExpression > 0
      ? ` Run 1, which compiled them, held ${first.toFixed(0)} B per schedule against the median ${cronBytes.toFixed(0)} B: ≈ ${perExpression.toFixed(0)} KB per compiled expression, held once.`
      : ''
  return `Cron schedules hold ${cronBytes.toFixed(0)} B each, ${formatRatio(cronBytes / everyBytes)} an \`every\` schedule's ${everyBytes.toFixed(0)} B (all ${formatCount(count)}: ≈ ${((cronBytes * count) / 1e6).toFixed(0)} MB). Compiled cron expressions are shared per (time zone, expression text) in a process-wide cache: the ${formatCount(count)} schedules here use ${CRON_EXPRESSIONS} expressions in one zone, so ${CRON_EXPRESSIONS} croner \`Cron\`s (each ≈ 80 KB: croner 11 fills an \`Array(10000)\` for the year field), ${reuse}; \`every\` schedules compile nothing.${compiled}`
}

/** Notes computed from this run: the costliest keyed operation, the cancel by key, the heap of cron schedules. */
function notesOf(ops: readonly OpsResult[], many: readonly ManyResult[]): string[] {
  const base = median(ops[0]?.samples ?? [])
  const of = (kind: OpsCase): number => median(ops.find((r) => r.kind === kind)?.samples ?? [])
  const keyed = ops.filter((r) => r.kind.includes('jobKey') || r.kind.startsWith('replace'))
  const worst = keyed.reduce((a, b) => (median(b.samples) > median(a.samples) ? b : a))
  const cancels = of('loop.jobs.cancel(jobKey)') / of('handle.cancel(), plain delayed')
  return [
    `The costliest keyed operation is **${worst.kind}**: ${formatRatio(median(worst.samples) / base)} the plain \`postDelayed\` (${median(worst.samples).toFixed(0)} ns against ${base.toFixed(0)} ns).`,
    `\`loop.jobs.cancel(jobKey)\` costs ${formatRatio(cancels)} a \`handle.cancel()\` of a plain delayed message (it looks the key string up, frees the key, and builds a cancel reason naming the key in a template string; the handle's reason is a constant).`,
    cronNote(many),
    `The debounce row's limit is \`maxWaitMs: ${MAX_WAIT_MS}\`: a replacing post is due at min(its delay, ${MAX_WAIT_MS / 1000} s).`,
  ]
}

const CHECKS = [
  'plain `postDelayed`: `gauges.delayed` = n; every `handle.cancel()` returned true, none left delayed',
  "keyed `postDelayed`: `loop.jobs.size` = n; every `loop.jobs.cancel(jobKey)` answered `'cancelled'`, no key left",
  'replace rows: n keys, n messages cancelled (the replaced ones), n delayed; every key names the new payload, due at the new delay (`replace`), the old due time (`preserve_run_at`) or min(new delay, `maxWaitMs`) (`debounce`)',
  'many schedules: every item delayed; `list()` returned every schedule, each with a next due time',
  'fires: every message handled once (`succeeded` = count); every schedule ran once and its next fire is due one interval (or one hour) later',
]

async function main(argv: readonly string[]): Promise<void> {
  const config = parseSchedulesCli(argv)
  if (config === undefined) return log(SCHEDULES_USAGE)
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const started = performance.now()
  const [machine, revision] = [describeMachine(), codeRevision()]
  const workload = `${formatCount(config.n)} delayed messages per operation run (delays ${DELAY_LABEL}, integers, seeded); ${formatCount(config.everyCount)} \`every\` schedules and ${formatCount(config.cronCount)} cron schedules registered; ${formatCount(config.fireCount)} due at once per fire run; median of ${config.runs} interleaved run${config.runs === 1 ? '' : 's'} after a warm-up`
  log(`schedules${config.smoke ? ' --smoke' : ''}: ${workload}`)
  log(`machine: ${formatMachine(machine)}`)
  warmUp(config)
  log('\nKeyed delays, per operation:')
  const ops = measureOps(config)
  log('\nMany schedules:')
  const many = measureMany(config)
  log('\nFire:')
  const fire = await measureFire(config)
  const tables = { ops: opsTable(ops), many: manyTable(many), fire: fireTable(fire) }
  const notes = notesOf(ops, many)
  log(`\n${tables.ops}\n\n${tables.many}\n\n${tables.fire}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`)
  if (config.smoke) log('Smoke run: figures from tiny sizes are not meaningful; only the checks count.')
  const seconds = (performance.now() - started) / 1000
  if (config.write) {
    const command = producingCommand(argv, 'schedules')
    const date = new Date()
    const path = writeSchedulesResults({
      command,
      machine,
      revision,
      date,
      workload,
      ...tables,
      notes,
      checks: CHECKS,
      seconds,
    })
    log(`Wrote ${path}`)
  }
  log(`All self-checks passed (${seconds.toFixed(1)} s).`)
}

runSuite('schedules', SCHEDULES_USAGE, main)
