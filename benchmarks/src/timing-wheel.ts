import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount } from './lib/stats.js'
import { parseWheelCli, WHEEL_USAGE, type WheelBenchConfig } from './lib/wheel-cli.js'
import { realClockRun, summarizeLateness, virtualFire } from './lib/wheel-fire.js'
import { bytesPerTimer, MEMORY_CASES } from './lib/wheel-memory.js'
import { measureOps, nodeTimers, type OpsSubject, timerWorkload, wheelHandles, wheelIds } from './lib/wheel-ops.js'
import {
  type FireResult,
  fireTable,
  type LatenessResult,
  latenessTable,
  type MemoryResult,
  memoryTable,
  type OpsCase,
  type OpsResult,
  opsTable,
  targetsTable,
} from './lib/wheel-report.js'
import { writeWheelResults } from './lib/wheel-results.js'

/** Delays of the schedule/cancel and virtual fire runs: 1 ms – 60 s, and one fixed 30 s delay. */
const SPREAD_MS = 60_000
const FIXED_MS = 30_000
const SUBJECTS: readonly [OpsCase, OpsSubject][] = [
  ['wheel schedule() / cancel()', wheelHandles],
  ['wheel add() / remove()', wheelIds],
  ['setTimeout / clearTimeout', nodeTimers],
]

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

/** Schedule/cancel: every subject on both delay kinds, runs interleaved so drift hits all alike. */
function measureAllOps(config: WheelBenchConfig): OpsResult[] {
  const results: OpsResult[] = []
  for (const n of config.sizes) {
    for (const w of [timerWorkload(n, SPREAD_MS, 0, 0x71e1), timerWorkload(n, 0, FIXED_MS, 0x71e2)]) {
      const rows = SUBJECTS.map(([kind]) => ({ kind, n, delays: w.label, samples: [] }) as OpsResult)
      for (let run = 1; run <= config.runs; run++) {
        SUBJECTS.forEach(([kind, subject], i) => {
          const s = measureOps(subject, w)
          rows[i]?.samples.push(s)
          log(
            `  run ${run}/${config.runs}  ${formatCount(n).padStart(9)}  ${w.label.padEnd(18)} ${kind.padEnd(28)} schedule ${s.schedule.toFixed(0).padStart(5)} ns  cancel ${s.cancelInOrder.toFixed(0).padStart(5)} / ${s.cancelRandom.toFixed(0).padStart(5)} ns`,
          )
        })
      }
      results.push(...rows)
    }
  }
  return results
}

/** Fire: virtual-clock runs of the wheel, then one real-clock run of each subject per size. */
async function measureFire(config: WheelBenchConfig, lateness: LatenessResult[]): Promise<FireResult[]> {
  const results: FireResult[] = []
  for (const n of config.sizes) {
    const w = timerWorkload(n, SPREAD_MS, 0, 0x71e3)
    const steps: number[] = []
    const catchUp: number[] = []
    for (let run = 1; run <= config.runs; run++) {
      steps.push(virtualFire(w, 'steps'))
      catchUp.push(virtualFire(w, 'catch-up'))
      log(
        `  run ${run}/${config.runs}  ${formatCount(n).padStart(9)}  virtual clock: ${steps.at(-1)?.toFixed(0)} ns (1 ms steps), ${catchUp.at(-1)?.toFixed(0)} ns (catch-up) per fired timer`,
      )
    }
    const real = timerWorkload(n, config.realSpreadMs, 0, 0x71e4)
    const cpu = { wheel: Number.NaN, setTimeout: Number.NaN }
    for (const subject of ['setTimeout', 'wheel'] as const) {
      const run = await realClockRun(subject, real, config.deadlineMs)
      cpu[subject] = run.cpuNsPerTimer
      lateness.push({ subject, n, spreadMs: config.realSpreadMs, summary: summarizeLateness(run.lateness) })
      log(
        `  real clock ${formatCount(n).padStart(9)}  ${subject.padEnd(10)} ${run.cpuNsPerTimer.toFixed(0)} ns CPU per timer`,
      )
    }
    results.push({ n, steps, catchUp, wheelCpu: cpu.wheel, nodeCpu: cpu.setTimeout })
  }
  return results
}

/** Lateness at a light load (the real-clock runs at each size give the heavy loads). */
async function measureLightLateness(config: WheelBenchConfig): Promise<LatenessResult[]> {
  const w = timerWorkload(config.lightLoad, config.realSpreadMs, 0, 0x71e5)
  const results: LatenessResult[] = []
  for (const subject of ['setTimeout', 'wheel'] as const) {
    const run = await realClockRun(subject, w, config.deadlineMs)
    results.push({ subject, n: w.n, spreadMs: config.realSpreadMs, summary: summarizeLateness(run.lateness) })
  }
  return results
}

function measureMemory(config: WheelBenchConfig): MemoryResult[] {
  const results: MemoryResult[] = []
  for (const n of config.sizes) {
    const w = timerWorkload(n, SPREAD_MS, 0, 0x71e6)
    for (const kind of MEMORY_CASES) {
      const bytes = bytesPerTimer(kind, w)
      results.push({ kind, n, bytes })
      log(`  ${formatCount(n).padStart(9)}  ${kind.padEnd(24)} ${bytes.toFixed(1).padStart(6)} B per pending timer`)
    }
  }
  return results
}

async function main(argv: readonly string[]): Promise<void> {
  const config = parseWheelCli(argv)
  if (config === undefined) {
    log(WHEEL_USAGE)
    return
  }
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const started = performance.now()
  const machine = describeMachine()
  const revision = codeRevision()
  const sizes = config.sizes.map(formatCount).join(' and ')
  const workload = `${sizes} pending timers; delays 1 ms–${SPREAD_MS / 1000} s (integers, seeded) or fixed ${FIXED_MS / 1000} s; real-clock runs with delays 1 ms–${config.realSpreadMs / 1000} s; median of ${config.runs} run${config.runs === 1 ? '' : 's'} for virtual-clock figures, one real-clock run per case`
  log(`timing-wheel${config.smoke ? ' --smoke' : ''}: ${workload}`)
  log(`machine: ${formatMachine(machine)}`)
  log('\nSchedule and cancel:')
  const ops = measureAllOps(config)
  log('\nFire:')
  const lateness: LatenessResult[] = []
  const fire = await measureFire(config, lateness)
  lateness.unshift(...(await measureLightLateness(config)))
  log('\nBytes per pending timer:')
  const memory = measureMemory(config)
  const tables = {
    ops: opsTable(ops),
    fire: fireTable(fire, `1 ms–${SPREAD_MS / 1000} s virtual, 1 ms–${config.realSpreadMs / 1000} s real`),
    lateness: latenessTable(lateness),
    memory: memoryTable(memory),
    targets: targetsTable({ ops, fire, memory, lateness, early: 0, delays: `random 1 ms–${SPREAD_MS / 1000} s` }),
  }
  log(`\n${tables.ops}\n\n${tables.fire}\n\n${tables.lateness}\n\n${tables.memory}\n`)
  if (config.smoke) log('Smoke run: figures from 10k timers are not meaningful; only the checks count.')
  else log(`${tables.targets}\n`)
  if (config.write) {
    const path = writeWheelResults({
      command: producingCommand(argv, 'timing-wheel'),
      machine,
      revision,
      date: new Date(),
      workload,
      ...tables,
      checks: [
        'schedule/cancel: every `cancel()` / `remove()` returned true once, and the wheel was empty afterwards',
        'virtual clock: every timer fired exactly once, in deadline order, none before its deadline',
        'real clock: every timer delivered exactly once; the wheel delivered none before its deadline (`performance.now()`)',
        'memory: every case held exactly the timers scheduled, and `clear()` returned them all',
      ],
      seconds: (performance.now() - started) / 1000,
    })
    log(`Wrote ${path}`)
  }
  log(`All self-checks passed (${((performance.now() - started) / 1000).toFixed(1)} s).`)
}

runSuite('timing-wheel', WHEEL_USAGE, main)
