import { allCaseIds, type Selection, selectCases } from './lib/cases.js'
import { BenchError } from './lib/check.js'
import { type BenchConfig, parseCli, USAGE } from './lib/cli.js'
import { featureTable, metricsTable, refusalTable } from './lib/cost-report.js'
import type { FlowingVariant } from './lib/flowing.js'
import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { measureInterleaved } from './lib/measure.js'
import { bytesPerMessage } from './lib/memory.js'
import { type MetricsResult, measureMetrics } from './lib/metrics-cost.js'
import { measureRefusals, type RefusalResult } from './lib/refusals.js'
import {
  type CaseResult,
  describeWorkload,
  type MemoryResult,
  memoryTable,
  samplesTable,
  throughputTable,
} from './lib/report.js'
import { writeResults } from './lib/results-file.js'
import { runSuite } from './lib/run-suite.js'
import type { Subject } from './lib/subject.js'
import { targetsTable } from './lib/targets.js'
import { verifyInvariants } from './lib/verify.js'
import { type Mode, makeWorkload, type Workload } from './lib/workload.js'

/** Distinct keys in the workload: enough that 8 workers rarely collide, few enough to repeat often. */
const KEY_COUNT = 10_000
const MODES: readonly Mode[] = ['burst', 'streamed']
/** Messages the filled `metrics()` case processes first (fewer when `--n` is smaller). */
const METRICS_FILL = 100_000

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

/**
 * The untimed invariant pass: both priority structures, both modes, random and single priority; and
 * the default structure with string keys.
 */
async function checkInvariants(config: BenchConfig): Promise<string[]> {
  const random = makeWorkload(config.n, KEY_COUNT, 'random', 0x1a2b)
  const single = makeWorkload(config.n, KEY_COUNT, 5, 0x3c4d)
  const passes: [Workload, FlowingVariant, string][] = []
  for (const queue of ['levels', 'heap'] as const) {
    passes.push([random, { queue, workers: 8 }, 'random priorities'])
    passes.push([single, { queue, workers: 8 }, 'one priority, i.e. strict per-key FIFO'])
  }
  passes.push([random, { queue: 'levels', workers: 8, keys: 'string' }, 'random priorities'])
  const lines: string[] = []
  for (const [workload, variant, priorities] of passes) {
    for (const mode of MODES) {
      const summary = await verifyInvariants(workload, variant, mode, config.deadlineMs)
      lines.push(`${summary} (${priorities})`)
      log(`  ✓ ${lines.at(-1)}`)
    }
  }
  return lines
}

async function measureMemory(config: BenchConfig, subjects: readonly Subject[]): Promise<MemoryResult[]> {
  const workload = makeWorkload(config.n, KEY_COUNT, 'random')
  const results: MemoryResult[] = []
  for (const subject of subjects.filter((s) => s.memory)) {
    const bytes = await bytesPerMessage(subject, workload, config.deadlineMs)
    results.push({ subject, bytesPerMessage: bytes })
    log(`  ${subject.label.padEnd(38)} ${bytes.toFixed(0).padStart(5)} B per queued message`)
  }
  return results
}

/** What one run measured, section by section. */
interface Measured {
  readonly invariants: string[]
  readonly memory: MemoryResult[]
  readonly throughput: CaseResult[]
  readonly features: CaseResult[]
  readonly refusals: RefusalResult[]
  readonly metrics: MetricsResult[]
}

async function measureAll(config: BenchConfig, selection: Selection): Promise<Measured> {
  log('\nInvariant pass (Flowing, untimed):')
  const invariants = await checkInvariants(config)
  log('\nBytes per queued message (paused queues):')
  const memory = await measureMemory(config, selection.throughput)
  const workload = makeWorkload(config.n, KEY_COUNT, 'random')
  const plan = { workload, runs: config.runs, modes: MODES, deadlineMs: config.deadlineMs, log }
  log('\nThroughput:')
  const throughput = await measureInterleaved(plan, selection.throughput)
  log('\nFeature cost:')
  const features = await measureInterleaved(plan, selection.features)
  log('\nRefused tryPost:')
  const refusals = await measureRefusals(selection.refusals, { ...plan, calls: config.n })
  log('\nmetrics():')
  const fill = makeWorkload(Math.min(config.n, METRICS_FILL), KEY_COUNT, 'random', 0x6e7f)
  const calls = Math.max(500, Math.min(20_000, Math.floor(config.n / 50)))
  const metrics = await measureMetrics(selection.metrics, { ...plan, fill, calls })
  return { invariants, memory, throughput, features, refusals, metrics }
}

/** A section's table, or a line saying `--only` selected none of its cases. */
function section(cases: readonly unknown[], table: () => string): string {
  return cases.length === 0 ? '(no case of this section selected by `--only`)' : table()
}

/** The tables of a run, rendered. */
function render(config: BenchConfig, m: Measured) {
  const n = config.n
  return {
    throughput: section(m.throughput, () => throughputTable(n, m.throughput)),
    memory: section(m.memory, () => memoryTable(m.memory)),
    features: section(m.features, () => featureTable(n, m.features)),
    refusals: section(m.refusals, () => refusalTable(m.refusals)),
    metrics: section(m.metrics, () => metricsTable(m.metrics, Math.min(n, METRICS_FILL))),
    targets: targetsTable({ n, ...m }),
    samples: samplesTable(n, m.throughput),
    featureSamples: samplesTable(n, m.features),
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const config = parseCli(argv)
  if (config === undefined) {
    log(USAGE)
    return
  }
  const missing = allCaseIds().filter((id) => !USAGE.includes(id))
  if (missing.length > 0) throw new BenchError(`case ids missing from the --help text: ${missing.join(', ')}`)
  const selection = selectCases(config.only)
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const started = performance.now()
  const machine = describeMachine()
  const revision = codeRevision() // now: the code under test was loaded at start
  const workloadLine = describeWorkload(config.n, config.runs, KEY_COUNT)
  log(`core-throughput${config.smoke ? ' --smoke' : ''}: ${workloadLine}`)
  log(`machine: ${formatMachine(machine)}`)
  const measured = await measureAll(config, selection)
  const tables = render(config, measured)
  log(`\n${tables.throughput}\n\n${tables.memory}\n`)
  log(`Feature cost (ns per message, × the plain row):\n\n${tables.features}\n`)
  log(`Refused tryPost:\n\n${tables.refusals}\n\nmetrics():\n\n${tables.metrics}\n`)
  if (config.smoke) log('Smoke run: figures from 20k messages are not meaningful; only the checks count.')
  else log(`${tables.targets}\n`)
  if (config.write) {
    const seconds = (performance.now() - started) / 1000
    const date = new Date()
    const doc = { command: producingCommand(argv), machine, revision, date, workload: workloadLine, seconds }
    log(`Wrote ${writeResults({ ...doc, ...tables, invariants: measured.invariants })}`)
  }
  log(`All self-checks passed (${((performance.now() - started) / 1000).toFixed(1)} s).`)
}

runSuite('core-throughput', USAGE, main)
