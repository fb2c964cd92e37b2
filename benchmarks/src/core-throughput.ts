import { type BenchConfig, parseCli, USAGE, UsageError } from './lib/cli.js'
import { flowingSubject } from './lib/flowing.js'
import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { bytesPerMessage } from './lib/memory.js'
import { fastqCallback, fastqPromise, pQueueSubject } from './lib/peers.js'
import {
  type CaseResult,
  describeWorkload,
  type MemoryResult,
  memoryTable,
  samplesTable,
  targetsTable,
  throughputTable,
} from './lib/report.js'
import { writeResults } from './lib/results-file.js'
import { runSuite } from './lib/run-suite.js'
import { formatRate } from './lib/stats.js'
import { type Subject, timeRun } from './lib/subject.js'
import { verifyInvariants } from './lib/verify.js'
import { type Mode, makeWorkload } from './lib/workload.js'

/** Distinct keys in the workload: enough that 8 workers rarely collide, few enough to repeat often. */
const KEY_COUNT = 10_000
const MODES: readonly Mode[] = ['burst', 'streamed']
/**
 * A case slower than this per run (p-queue's O(n) priority insert in burst: minutes per run) is run
 * once: more runs would cost minutes each to refine a figure that is orders of magnitude off anyway.
 */
const SLOW_RUN_SECONDS = 60

const SUBJECTS: readonly Subject[] = [
  flowingSubject({ queue: 'levels', workers: 1 }),
  flowingSubject({ queue: 'levels', workers: 4 }),
  flowingSubject({ queue: 'levels', workers: 8 }),
  flowingSubject({ queue: 'heap', workers: 8 }),
  fastqPromise,
  fastqCallback,
  pQueueSubject(false),
  pQueueSubject(true),
]

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

/** The untimed invariant pass: both priority structures, both modes, random and single priority. */
async function checkInvariants(config: BenchConfig): Promise<string[]> {
  const lines: string[] = []
  const random = makeWorkload(config.n, KEY_COUNT, 'random', 0x1a2b)
  const single = makeWorkload(config.n, KEY_COUNT, 5, 0x3c4d)
  for (const queue of ['levels', 'heap'] as const) {
    for (const mode of MODES) {
      for (const [workload, priorities] of [
        [random, 'random priorities'],
        [single, 'one priority, i.e. strict per-key FIFO'],
      ] as const) {
        const summary = await verifyInvariants(workload, { queue, workers: 8 }, mode, config.deadlineMs)
        lines.push(`${summary} (${priorities})`)
        log(`  ✓ ${lines.at(-1)}`)
      }
    }
  }
  return lines
}

/**
 * Runs every case `config.runs` times, interleaved (run 1 of all, then run 2 …) so drift hits all
 * alike. A case whose first run took over {@link SLOW_RUN_SECONDS} runs only once.
 */
async function measureThroughput(config: BenchConfig, subjects: readonly Subject[]): Promise<CaseResult[]> {
  const workload = makeWorkload(config.n, KEY_COUNT, 'random')
  const results: CaseResult[] = subjects.map((subject) => ({ subject, burst: [], streamed: [] }))
  for (let run = 1; run <= config.runs; run++) {
    for (const mode of MODES) {
      for (const result of results) {
        if (result[mode].some((s) => s.seconds > SLOW_RUN_SECONDS)) {
          log(
            `  run ${run}/${config.runs}  ${mode.padEnd(8)}  ${result.subject.label.padEnd(28)} skipped: one run took > ${SLOW_RUN_SECONDS} s`,
          )
          continue
        }
        const sample = await timeRun(result.subject, workload, mode, config.deadlineMs)
        result[mode].push(sample)
        const rate = formatRate(config.n / sample.seconds).padStart(7)
        log(`  run ${run}/${config.runs}  ${mode.padEnd(8)}  ${result.subject.label.padEnd(28)} ${rate} M msg/s`)
      }
    }
  }
  return results
}

async function measureMemory(config: BenchConfig, subjects: readonly Subject[]): Promise<MemoryResult[]> {
  const workload = makeWorkload(config.n, KEY_COUNT, 'random')
  const results: MemoryResult[] = []
  for (const subject of subjects.filter((s) => s.memory)) {
    const bytes = await bytesPerMessage(subject, workload, config.deadlineMs)
    results.push({ subject, bytesPerMessage: bytes })
    log(`  ${subject.label.padEnd(28)} ${bytes.toFixed(0).padStart(5)} B per queued message`)
  }
  return results
}

function selectSubjects(only: readonly string[]): Subject[] {
  if (only.length === 0) return [...SUBJECTS]
  const chosen = SUBJECTS.filter((s) => only.some((o) => s.id.includes(o)))
  if (chosen.length === 0) throw new UsageError(`\`--only=${only.join(',')}\` matches no case id`)
  return chosen
}

async function main(argv: readonly string[]): Promise<void> {
  const config = parseCli(argv)
  if (config === undefined) {
    log(USAGE)
    return
  }
  const subjects = selectSubjects(config.only)
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const started = performance.now()
  const machine = describeMachine()
  const revision = codeRevision() // now: the code under test was loaded at start
  const workloadLine = describeWorkload(config.n, config.runs, KEY_COUNT)
  log(`core-throughput${config.smoke ? ' --smoke' : ''}: ${workloadLine}`)
  log(`machine: ${formatMachine(machine)}`)
  log('\nInvariant pass (Flowing, untimed):')
  const invariants = await checkInvariants(config)
  log('\nBytes per queued message (paused queues):')
  const memory = await measureMemory(config, subjects)
  log('\nThroughput:')
  const results = await measureThroughput(config, subjects)
  const throughput = throughputTable(config.n, results)
  const memoryText = memoryTable(memory)
  const targets = targetsTable(config.n, results, memory)
  log(`\n${throughput}\n\n${memoryText}\n`)
  if (config.smoke) log('Smoke run: figures from 20k messages are not meaningful; only the checks count.')
  else log(`${targets}\n`)
  if (config.write) {
    const path = writeResults({
      command: producingCommand(argv),
      machine,
      revision,
      date: new Date(),
      workload: workloadLine,
      invariants,
      throughput,
      memory: memoryText,
      targets,
      samples: samplesTable(config.n, results),
      seconds: (performance.now() - started) / 1000,
    })
    log(`Wrote ${path}`)
  }
  log(`All self-checks passed (${((performance.now() - started) / 1000).toFixed(1)} s).`)
}

runSuite('core-throughput', USAGE, main)
