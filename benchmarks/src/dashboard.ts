/**
 * `node dist/dashboard.js [--smoke] [--runs=<k>]`: what `@flowing/dashboard` costs a busy loop — the
 * plain loop, a dashboard with no page open, and one page open (overview, keys) whose live stream is
 * read by a child process, as a browser would. Time-based runs (the dashboard ticks once a second and
 * samples per-message events 20 ms a second), interleaved. Fails (exit 1) when a check fails — never
 * on speed.
 */
import os from 'node:os'
import { parseSuiteArgs } from './lib/cli.js'
import {
  noiseNote,
  roundsTable,
  type Samples,
  throughputTable,
  toggleTable,
  toggleVerdict,
  verdicts,
  writeDashboardResults,
} from './lib/dashboard-report.js'
import { CASES, type CaseId, type RunTiming, runCase } from './lib/dashboard-run.js'
import { KEY_COUNT, type WindowReading, WORKERS } from './lib/dashboard-setup.js'
import { runToggle, type ToggleSample } from './lib/dashboard-toggle.js'
import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount } from './lib/stats.js'
import { STREAM_BATCH } from './lib/workload.js'

const USAGE = `Usage: node dist/dashboard.js [options]

  --smoke        ≈ 0.3 s per case, 1 round: checks every case works (never fails on speed), writes nothing
  --runs=<k>     measured rounds (default 5), after a warm-up round
  --write        write benchmarks/RESULTS-dashboard.md (default: on for a full run with the default rounds)
  --help         this text`

const DEFAULT_RUNS = 5
const FULL: RunTiming = { settleMs: 1_500, windowMs: 3_000 }
const SMOKE: RunTiming = { settleMs: 200, windowMs: 300 }

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

const rate = (v: number): string => `${formatCount(Math.round(v))}/s`

/** Every case once, starting at case `first` (the start rotates so no case always follows the same one). */
async function cases(label: string, first: number, timing: RunTiming, samples?: Map<CaseId, WindowReading[]>) {
  const cells: string[] = []
  for (let i = 0; i < CASES.length; i++) {
    const c = CASES[(first + i) % CASES.length] as (typeof CASES)[number]
    const sample = await runCase(c.id, timing)
    samples?.get(c.id)?.push(sample)
    cells.push(`${c.id} ${rate(sample.rate)}`)
  }
  log(`  ${label}  ${cells.join(', ')}`)
}

/** The warm-up round (full runs), then the measured rounds: the cases, then one A B B A loop, each round. */
async function measure(smoke: boolean, runs: number, timing: RunTiming) {
  if (!smoke) await cases('warm-up', 0, timing)
  const samples = new Map<CaseId, WindowReading[]>(CASES.map((c) => [c.id, []]))
  const toggles: ToggleSample[] = []
  for (let r = 0; r < runs; r++) {
    await cases(`round ${r + 1}/${runs}`, r % CASES.length, timing, samples)
    const t = await runToggle(timing)
    toggles.push(t)
    log(`  round ${r + 1}/${runs}  A B B A: ${[t.closed[0], ...t.open, t.closed[1]].map(rate).join(', ')}`)
  }
  return { samples: samples as Samples, toggles }
}

const CHECKS = [
  'every run: posted = accepted = succeeded, nothing rejected, failed, dropped or cancelled, nothing left queued or running',
  "dashboard with no page open (its own row, and the A windows): the loop has 0 listeners for `posted`, `started` and `finished` at the window's start and end",
  "a page open: `dashboard.pages` is 1 once its stream has sent two ticks and at the window's end; the client received every `tick` with valid JSON naming its view (the keys view: with its `keys` list), at least 2 inside each window, and every tick inside a window had **sampled** per-type rates (the dashboard's mode above 2,000 msgs/s)",
  'after the page closes: `dashboard.pages` is back to 0 and the loop has 0 per-message listeners again',
]

const NOTES = [
  "Each run: a fresh loop (and dashboard, `node:http` server on 127.0.0.1, page), a full GC, posting from the start; the window opens after 1.5 s of posting and, with a page, once the page has its first two ticks. Until its second tick a page's per-type rates are counted exactly (listeners attached the whole second); the window measures the steady state after it, where they are attached 20 ms a second.",
  "The page is `GET <base>/api/loops/bench/stream?view=…` read by a child Node process (parsing each tick's JSON), so its work is not charged to the loop; the dashboard's own work — the tick (`loop.metrics()`, `loop.inspect()` for keys), the JSON, the socket write, the event-loop monitor and the sampled listeners — runs in the measured process, as it would in an app.",
]

async function main(argv: string[]): Promise<void> {
  const args = parseSuiteArgs(argv)
  if (args === undefined) return log(USAGE)
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const started = performance.now()
  const [machine, revision] = [describeMachine(), codeRevision()]
  const timing = args.smoke ? SMOKE : FULL
  const runs = argv.some((a) => a.startsWith('--runs')) || args.smoke ? args.runs : DEFAULT_RUNS
  const workload = `${formatCount(STREAM_BATCH)} posts per event-loop turn (\`setImmediate\` between batches) without end, no-op async handler, ${formatCount(KEY_COUNT)} string keys (\`'k' + (i % ${KEY_COUNT})\`), priorities 0–9 (seeded), ${WORKERS} workers; each run ${timing.settleMs / 1000} s of posting, then a ${timing.windowMs / 1000} s window; ${runs} interleaved round${runs === 1 ? '' : 's'}${args.smoke ? '' : ' after a warm-up round'}, each round's case order rotated`
  log(`dashboard${args.smoke ? ' --smoke' : ''}: ${workload}`)
  log(`machine: ${formatMachine(machine)}`)
  const { samples, toggles } = await measure(args.smoke, runs, timing)
  const tables = { throughput: throughputTable(samples), rounds: roundsTable(samples), toggle: toggleTable(toggles) }
  const lines = [...verdicts(samples), toggleVerdict(toggles), noiseNote(samples, toggles)]
  log(`\n${tables.throughput}\n\n${tables.toggle}\n\n${lines.map((v) => `- ${v}`).join('\n')}\n`)
  if (args.smoke) log('Smoke run: figures from 0.3 s windows are not meaningful; only the checks count.')
  const seconds = (performance.now() - started) / 1000
  if (args.write && !args.smoke) {
    const command = producingCommand(argv, 'dashboard')
    const loadAtEnd = os.loadavg()[0] ?? 0
    const doc = { command, machine, loadAtEnd, revision, date: new Date(), workload, ...tables, seconds }
    log(`Wrote ${writeDashboardResults({ ...doc, verdicts: lines, checks: CHECKS, notes: NOTES })}`)
  }
  log(`All self-checks passed (${seconds.toFixed(1)} s).`)
}

runSuite('dashboard', USAGE, main)
