/**
 * `node dist/flow.js [--smoke]`: what flow control costs in `@flowing/core` — rate-limit and
 * key-group bookkeeping that never binds, a binding route limit (rate achieved, most starts in any
 * window), `request()` against `post()` and the peers that return results (p-queue, fastq), and
 * `cancel()` of queued messages. Fails (exit 1) when a count does not add up or a window holds more
 * starts than its limit — never on speed. A full run writes RESULTS-flow.md.
 */
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { BINDING_CONFIGS, type BindingSample, runBinding } from './flow/binding.js'
import { BY_ID_CANCELS, cancelCallNs, cancelCases } from './flow/cancel.js'
import { DOWNSTREAM_LIMITS, type DownstreamSample, runDownstream } from './flow/downstream.js'
import { baselineId, limiterCases } from './flow/limiter-cost.js'
import { REQUEST_CASES } from './flow/request.js'
import { type CaseSamples, costTable, interleave, roundsTable } from './flow/rounds.js'
import { BenchError } from './lib/check.js'
import { ensureExposedGc } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount, formatRatio, median } from './lib/stats.js'
import { renderTable } from './lib/table.js'
import { makeWorkload } from './lib/workload.js'

const RESULTS = new URL('../RESULTS-flow.md', import.meta.url)
const USAGE = 'usage: node dist/flow.js [--smoke]'

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

/** Sizes: full run or smoke. */
interface Sizes {
  readonly limiter: number
  readonly binding: number
  readonly request: number
  readonly cancel: number
  readonly rounds: number
  readonly warmup: number
  /** Seconds against each simulated provider. */
  readonly downstream: number
}

const FULL: Sizes = {
  limiter: 200_000,
  binding: 25_000,
  request: 100_000,
  cancel: 100_000,
  rounds: 5,
  warmup: 20_000,
  downstream: 20,
}
const SMOKE: Sizes = {
  limiter: 5_000,
  binding: 1_000,
  request: 2_000,
  cancel: 4_000,
  rounds: 1,
  warmup: 500,
  downstream: 2,
}

const byId = (samples: readonly CaseSamples[], id: string): CaseSamples => {
  const s = samples.find((x) => x.flowCase.id === id)
  if (s === undefined) throw new BenchError(`no case ${id}`)
  return s
}

async function bindingRounds(sizes: Sizes): Promise<BindingSample[][]> {
  const out: BindingSample[][] = BINDING_CONFIGS.map(() => [])
  for (let round = 0; round < sizes.rounds; round++) {
    for (const [i, config] of BINDING_CONFIGS.entries()) {
      const s = await runBinding(config, sizes.binding)
      out[i]?.push(s)
      log(
        `  round ${round + 1}/${sizes.rounds}  ${config.max}/${config.perMs} ms: ${s.achieved.toFixed(0)}/s, max in window ${s.maxInWindow}`,
      )
    }
  }
  return out
}

function bindingTable(samples: readonly BindingSample[][]): string {
  return renderTable(
    [
      { header: 'limit (per: route)', align: 'left' },
      { header: 'configured /s', align: 'right' },
      { header: 'achieved /s (median)', align: 'right' },
      { header: 'achieved ÷ configured', align: 'right' },
      { header: 'most starts in any window (all rounds)', align: 'right' },
      { header: 'holds', align: 'right' },
    ],
    samples.map((runs) => {
      const c = (runs[0] as BindingSample).config
      const achieved = median(runs.map((r) => r.achieved))
      const configured = (runs[0] as BindingSample).configured
      const worst = Math.max(...runs.map((r) => r.maxInWindow))
      return [
        `max ${c.max} per ${c.perMs} ms`,
        formatCount(configured),
        formatCount(Math.round(achieved)),
        formatRatio(achieved / configured),
        `${worst} (max ${c.max})${worst > c.max ? ' **OVER**' : ''}`,
        formatCount(median(runs.map((r) => r.holds))),
      ]
    }),
  )
}

async function downstreamRuns(sizes: Sizes): Promise<DownstreamSample[]> {
  const out: DownstreamSample[] = []
  for (const limit of DOWNSTREAM_LIMITS) {
    const s = await runDownstream(limit, sizes.downstream)
    log(
      `  provider ${limit}/s: accepted ${s.achieved.toFixed(0)}/s, ${s.refusedPerAccepted.toFixed(3)} refused per accepted`,
    )
    out.push(s)
  }
  return out
}

function downstreamTable(samples: readonly DownstreamSample[]): string {
  return renderTable(
    [
      { header: 'provider limit /s', align: 'right' },
      { header: 'accepted /s (2nd half)', align: 'right' },
      { header: 'accepted ÷ limit', align: 'right' },
      { header: '429s per accepted call (2nd half)', align: 'right' },
      { header: 'most accepted in any second', align: 'right' },
    ],
    samples.map((s) => [
      formatCount(s.limit),
      formatCount(Math.round(s.achieved)),
      formatRatio(s.achieved / s.limit),
      s.refusedPerAccepted.toFixed(3),
      formatCount(s.accepted),
    ]),
  )
}

function cancelCallLine(): string {
  const half = median(cancelCallNs.get('half') ?? [Number.NaN])
  const id = median(cancelCallNs.get('by-id') ?? [Number.NaN])
  return `cancel() call alone (median over rounds): by message ${half.toFixed(0)} ns; by id ${id.toFixed(0)} ns (${BY_ID_CANCELS} calls on the backlog)`
}

async function main(args: string[]): Promise<void> {
  const unknown = args.filter((a) => a !== '--smoke' && a !== '--expose-gc')
  if (args.includes('--help')) return log(USAGE)
  if (unknown.length > 0) throw new BenchError(`unknown argument ${unknown.join(' ')}\n${USAGE}`)
  if (!ensureExposedGc()) return
  const smoke = args.includes('--smoke')
  const sizes = smoke ? SMOKE : FULL
  const started = performance.now()
  const machine = describeMachine()
  const revision = codeRevision()
  log(`flow${smoke ? ' --smoke' : ''}: machine ${formatMachine(machine)}`)
  const plan = (n: number) => ({ n, rounds: sizes.rounds, warmup: sizes.warmup, log })
  const workload = makeWorkload(Math.max(sizes.limiter, sizes.cancel), 10_000, 5)
  log('\n1. Limiter cost (never binding):')
  const limiter = await interleave(plan(sizes.limiter), limiterCases(workload))
  log('\n2. Binding limit:')
  const binding = await bindingRounds(sizes)
  log('\n3. request() vs post():')
  const request = await interleave(plan(sizes.request), REQUEST_CASES)
  log('\n4. cancel():')
  const cancel = await interleave(plan(sizes.cancel), cancelCases(workload))
  log('\n5. A provider answering 429:')
  const downstream = await downstreamRuns(sizes)
  const tables = {
    limiter: costTable(limiter, sizes.limiter, (s) => byId(limiter, baselineId(s.flowCase.id))),
    binding: bindingTable(binding),
    request: costTable(request, sizes.request, () => byId(request, 'post')),
    cancel: costTable(cancel, sizes.cancel, () => byId(cancel, 'plain')),
    cancelCall: cancelCallLine(),
    downstream: downstreamTable(downstream),
    rounds: [
      roundsTable(limiter, sizes.limiter),
      roundsTable(request, sizes.request),
      roundsTable(cancel, sizes.cancel),
    ],
  }
  log(`\n1. Limiter cost, ${formatCount(sizes.limiter)} msgs:\n\n${tables.limiter}`)
  log(`\n2. Binding limit, ${formatCount(sizes.binding)} msgs:\n\n${tables.binding}`)
  log(`\n3. request() vs post(), ${formatCount(sizes.request)} msgs:\n\n${tables.request}`)
  log(`\n4. cancel(), ${formatCount(sizes.cancel)} msgs posted:\n\n${tables.cancel}\n\n${tables.cancelCall}`)
  log(`\n5. A provider answering 429, ${sizes.downstream} s each:\n\n${tables.downstream}`)
  const seconds = (performance.now() - started) / 1000
  if (!smoke) {
    const doc = { command: producingCommand(args, 'flow'), revision, machine: formatMachine(machine), seconds, sizes }
    writeFileSync(RESULTS, renderDoc(doc, tables))
    log(`\nWrote ${RESULTS.pathname}`)
  }
  log(`All self-checks passed (${seconds.toFixed(1)} s; load average now ${os.loadavg()[0]?.toFixed(2)}).`)
}

interface Doc {
  readonly command: string
  readonly revision: string
  readonly machine: string
  readonly seconds: number
  readonly sizes: Sizes
}

function renderDoc(
  d: Doc,
  t: {
    limiter: string
    binding: string
    request: string
    cancel: string
    cancelCall: string
    downstream: string
    rounds: string[]
  },
): string {
  const s = d.sizes
  return `# Benchmark results — flow control

Generated file: do not edit by hand; re-run the command below. What the rows are: [README.md](./README.md#what-flow-measures).
**How to read:** ns/msg is the median of ${s.rounds} interleaved rounds (a full GC before each, after an uncounted warm-up);
compare the *extra ns/msg* and *× baseline* columns within this file, never absolute figures across runs
(this 2-core box drifts 10–30 % run to run and 2–3× between days). *Spread* is (max − min) / median of the rounds.
BullMQ's limiter is not measured: it needs Redis.

- **Command:** ${d.command}
- **Code:** commit ${d.revision}
- **Machine:** ${d.machine}
- **Date:** ${new Date().toISOString()} (whole run: ${d.seconds.toFixed(0)} s)

## 1. Limiter cost per message (never binding)

${formatCount(s.limiter)} keyed no-op async messages (10,000 distinct keys), 8 workers; *burst* = all posted in one
synchronous loop then drained, *streamed* = 1,000 per event-loop turn. Baseline: the unlimited row of the same
mode and key kind. Every row checks \`counters.rateLimited = 0\` (the limit never bound).

${t.limiter}

## 2. A binding limit

${formatCount(s.binding)} messages posted at once to one route limited to 50,000 starts/s; achieved = (N − max) starts
over the time from the first handler start to the last. The window column is the most handler starts
(\`performance.now()\` at handler entry) seen in any sliding window of \`perMs\`, over every round: it must be ≤ max
(a row over it is flagged **OVER**: the limiter books a start when a worker takes the message, and the
handler is entered after a variable lag, so handler entries can bunch closer than the booked starts).

${t.binding}

## 3. request() vs post() and the peers that return results

${formatCount(s.request)} messages, 8 workers, the handler returns \`2 × payload\`; every result-returning row checks the
sum of its results. Baseline: Flowing \`post()\` + \`drain()\` (no results).

${t.request}

## 4. cancel() of queued messages

${formatCount(s.cancel)} keyed messages posted to a paused loop, then started and drained; times per posted message
(the plain rows are the baselines: N, and N/2 that is what the cancel row runs). ${t.cancelCall}.

${t.cancel}

## 5. A provider that answers 429

A simulated provider accepts at most *limit* calls in any second (a sliding window) and throws
\`RateLimitError\` (retry after 100 ms) above it; an unlimited route with a standing backlog calls it from
8 workers for ${s.downstream} s. No rate limit is configured: the route's throttle finds the provider's rate
from the 429s alone (slow start from one call a second, a 30 % cut at a further 429, + 5 % per busy
250 ms). Figures over the second half of the run.

${t.downstream}

## Every round (ns/msg)

${t.rounds.join('\n\n')}
`
}

runSuite('flow', USAGE, main)
