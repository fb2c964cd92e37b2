/**
 * Scaling curves: the cost per message of one Flowing loop as things grow — the queue's depth, the
 * number of distinct keys, the delayed messages pending on the timing wheel. Prints a table and a
 * verdict (flat, logarithmic, grows) per dimension; a full run writes `RESULTS-scaling.md` and the
 * charts `charts/scaling-{queue,keys,delayed}.svg`.
 *
 * @module
 */
import os from 'node:os'
import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount } from './lib/stats.js'
import { parseScalingCli, SCALING_USAGE, type ScalingConfig } from './scaling/cli.js'
import { measureDelayed, measureDepth, measureKeys, repsOf } from './scaling/measure.js'
import { type Dimension, dimensionTable, VERDICT_RULE, verdictLines } from './scaling/report.js'
import { type Section, writeScalingResults } from './scaling/results.js'
import { DELAY_MIN_MS, DELAY_SPREAD_MS, KEY_COUNT } from './scaling/runs.js'

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

const sizes = (list: readonly number[]): string => list.map(formatCount).join(', ')

const CHECKS = [
  'every run: handler calls = messages posted (a lost or doubled message fails the run; a drain that stalls fails at the deadline instead of hanging)',
  'queue depth and distinct keys: `posted = accepted = succeeded`, no rejected/failed/dropped/cancelled, nothing queued or running at rest',
  'delayed: `gauges.delayed` = D after filling and still D after the streamed workload (none came due, none ran); every `cancel()` returned true; at rest `accepted` = streamed + D, `succeeded` = streamed, `cancelled` = D, `delayed` = 0',
  'delayed: `stop()` ended and left no active timer (`process.getActiveResourcesInfo()` holds as many `Timeout`s as before the loop)',
]

function describeWorkload(config: ScalingConfig): string {
  return `one loop, 8 workers, levels queue, no-op async handler counting its calls, integer keys, priorities 0–9 drawn uniformly (seeded); queue depth Q ∈ {${sizes(config.depths)}} over ${formatCount(KEY_COUNT)} keys; distinct keys K ∈ {${sizes(config.keyCounts)}}, ${formatCount(config.keyMessages)} streamed messages; delayed pending D ∈ {${sizes(config.delayedCounts)}} (delays ${DELAY_MIN_MS / 1000}–${(DELAY_MIN_MS + DELAY_SPREAD_MS) / 1000} s), ${formatCount(config.besideMessages)} streamed messages beside them; median of ${config.runs} run${config.runs === 1 ? '' : 's'} per point, runs interleaved across sizes after one untimed warm-up run per dimension; a full collection (\`--expose-gc\`) before every timed phase`
}

/** `100 at 1,000, 10 at 10,000`: the repetitions of the sizes below `minOps`. */
function repeats(config: ScalingConfig, list: readonly number[]): string {
  const small = list.filter((size) => size < config.minOps)
  return small.map((size) => `${repsOf(config, size)} at ${formatCount(size)}`).join(', ') || 'none'
}

function sections(config: ScalingConfig, [queue, keys, delayed]: readonly Dimension[]): Section[] {
  const about = {
    queue: `\`createLoop({ capacity: Q + 1,000, workers: 8, autoStart: false })\`, then Q \`post()\` calls (${formatCount(KEY_COUNT)} keys), then \`start()\` and the time until \`drain()\` resolves. *post + drain* = (filling + draining) / Q, *post alone* = filling / Q, *drain alone* = draining / Q; each column is its own median, so *post + drain* need not be the sum of the other two. Below ${formatCount(config.minOps)} messages a sample repeats with fresh loops (${repeats(config, config.depths)}) and sums their times, so each drain's fixed cost (starting the pump, its last turns) is spread over Q messages at every size. Where the messages live in the heap when the drain starts differs with Q: at 1M they were promoted to the old generation while posting (the collector's work lands in *post alone*), at smaller Q many are still young and the drain's scavenges move them — compare *post + drain* across sizes, not one phase alone.`,
    keys: `${formatCount(config.keyMessages)} messages streamed, 1,000 posts per event-loop turn (\`setImmediate\`), through the core suite's Flowing subject (capacity = messages, 8 workers): first post until idle, per message. Keys are drawn uniformly from K, so at the larger K most keys are used once (the *keys used* column counts the keys the messages use and how many of those get a single message): the row then measures a key's whole life per message — its per-key state created and dropped — which is the point of it. At K = 10 with 8 workers a message often finds its key busy (a key runs one message at a time) and is parked behind it: that row pays the parking, not the size of the key table.`,
    delayed: `D \`postDelayed('tick', i, delayMs)\` calls with delays of ${DELAY_MIN_MS / 1000}–${(DELAY_MIN_MS + DELAY_SPREAD_MS) / 1000} s (\`maxDelayed\` = max(D, 1,000,000)), so that none comes due during a run; then a plain streamed workload of ${formatCount(config.besideMessages)} messages (${formatCount(KEY_COUNT)} keys) beside them, first post until idle; then \`cancel()\` on every handle, in posting order (random due times: at the larger D each cancel touches memory out of cache); then \`stop()\`. Below ${formatCount(config.minOps)} pending a sample repeats the fill and the cancels with fresh loops (${repeats(config, config.delayedCounts)}; the streamed workload runs once) and sums their times. The wheel arms one real timer for its earliest entry, so the streamed row shows what the pending messages cost by being there (heap the collector walks, wheel state), not the cost of firing them — the timing-wheel suite measures that.`,
  }
  return [
    { dimension: queue as Dimension, about: about.queue },
    { dimension: keys as Dimension, about: about.keys },
    { dimension: delayed as Dimension, about: about.delayed },
  ]
}

async function measureAll(config: ScalingConfig): Promise<Dimension[]> {
  const dimensions: Dimension[] = []
  for (const [title, measure] of [
    ['Queue depth', measureDepth],
    ['Distinct keys', measureKeys],
    ['Delayed messages pending', measureDelayed],
  ] as const) {
    log(`\n${title}:`)
    dimensions.push(await measure(config, log))
  }
  return dimensions
}

async function main(argv: readonly string[]): Promise<void> {
  const config = parseScalingCli(argv)
  if (config === undefined) {
    log(SCALING_USAGE)
    return
  }
  if (!ensureExposedGc()) return // the child, run with --expose-gc, did the work
  const started = performance.now()
  const machine = describeMachine()
  const revision = codeRevision() // before the results and charts are rewritten: they are tracked files
  const workload = describeWorkload(config)
  log(`scaling${config.smoke ? ' --smoke' : ''}: ${workload}`)
  log(`machine: ${formatMachine(machine)}`)
  const dimensions = await measureAll(config)
  log(`\nVerdict rule: ${VERDICT_RULE}`)
  for (const dim of dimensions) log(`\n${dim.title}\n\n${dimensionTable(dim)}\n\n${verdictLines(dim)}`)
  if (config.smoke) log('\nSmoke run: figures from small sizes and one run are not meaningful; only the checks count.')
  if (config.write) {
    const paths = writeScalingResults({
      command: producingCommand(argv, 'scaling'),
      machine,
      revision,
      date: new Date(),
      workload,
      sections: sections(config, dimensions),
      checks: CHECKS,
      seconds: (performance.now() - started) / 1000,
      loadAtEnd: os.loadavg()[0] ?? 0,
    })
    log(`\nWrote ${paths.join(', ')}`)
  }
  log(`All self-checks passed (${((performance.now() - started) / 1000).toFixed(1)} s).`)
}

runSuite('scaling', SCALING_USAGE, main)
