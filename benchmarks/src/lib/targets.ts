/**
 * BRIEF §5's targets with what this run measured and a verdict: the first-wave rows (the default loop,
 * integer keys) and the wave-2 rows (ratios with string keys too, the feature cost, refusals,
 * `metrics()`). Informational: a missed target never fails the run.
 *
 * @module
 */
import { nsPerMessage } from './cost-report.js'
import { ALL_ON_ROW, PLAIN_ROW } from './features.js'
import { type MetricsResult, metricsUs } from './metrics-cost.js'
import { type RefusalResult, refusalNs } from './refusals.js'
import { BASELINES, type CaseResult, FLOWING_DEFAULT, type MemoryResult, medianSample, rateOf } from './report.js'
import { formatMs, formatRate, formatRatio } from './stats.js'
import { renderTable } from './table.js'

/** The default loop with string keys (`order-k`). */
export const FLOWING_STRING = 'flowing-levels-w8-str'

/** Everything a run measured. */
export interface TargetInputs {
  readonly n: number
  readonly throughput: readonly CaseResult[]
  readonly memory: readonly MemoryResult[]
  readonly features: readonly CaseResult[]
  readonly refusals: readonly RefusalResult[]
  readonly metrics: readonly MetricsResult[]
}

type Row = [target: string, measured: string, verdict: string]

function row(target: string, measured: string, value: number, ok: (v: number) => boolean): Row {
  if (Number.isNaN(value)) return [target, '—', 'not measured']
  return [target, measured, ok(value) ? 'met' : 'NOT met']
}

const atLeast = (bound: number) => (v: number) => v >= bound
const atMost = (bound: number) => (v: number) => v <= bound

function ratioRow(target: string, ratio: number, ok: (v: number) => boolean): Row {
  return row(target, formatRatio(ratio), ratio, ok)
}

function p99Of(inputs: TargetInputs, id: string): number {
  const found = inputs.throughput.find((r) => r.subject.id === id)
  return (found === undefined ? undefined : medianSample(found.streamed)?.queueWait?.p99) ?? Number.NaN
}

function bytesOf(inputs: TargetInputs, id: string): number {
  return inputs.memory.find((m) => m.subject.id === id)?.bytesPerMessage ?? Number.NaN
}

/** The first wave's rows, about `flowing-levels-w8`. */
function firstWave(inputs: TargetInputs): Row[] {
  const { n, throughput: t } = inputs
  const burst = rateOf(t, FLOWING_DEFAULT, 'burst', n)
  const streamed = rateOf(t, FLOWING_DEFAULT, 'streamed', n)
  const fastqBurst = rateOf(t, BASELINES.fastq, 'burst', n)
  const fastqStreamed = rateOf(t, BASELINES.fastq, 'streamed', n)
  const pqBurst = rateOf(t, BASELINES.pQueue, 'burst', n)
  const p99 = p99Of(inputs, FLOWING_DEFAULT)
  const bytes = bytesOf(inputs, FLOWING_DEFAULT)
  return [
    row('streamed ≥ 3 M msg/s (stretch 4 M)', `${formatRate(streamed)} M`, streamed, atLeast(3e6)),
    row('burst ≥ 1 M msg/s from a full backlog', `${formatRate(burst)} M`, burst, atLeast(1e6)),
    ratioRow('burst ≥ 2.5× fastq promise API', burst / fastqBurst, atLeast(2.5)),
    ratioRow('burst ≥ 40× p-queue with priorities', burst / pqBurst, atLeast(40)),
    ratioRow('streamed ≥ 0.75× fastq promise (stretch)', streamed / fastqStreamed, atLeast(0.75)),
    row('queue-wait p99 ≤ 0.5 ms, streamed', `${formatMs(p99)} ms`, p99, atMost(0.5)),
    row('≤ 140 B per queued message', `${bytes.toFixed(0)} B`, bytes, atMost(140)),
  ]
}

/** Wave 2's throughput rows: ratios to fastq's promise API with integer and string keys. */
function keyRows(inputs: TargetInputs): Row[] {
  const { n, throughput: t } = inputs
  const ratio = (id: string, mode: 'burst' | 'streamed'): number =>
    rateOf(t, id, mode, n) / rateOf(t, BASELINES.fastq, mode, n)
  const p99 = p99Of(inputs, FLOWING_STRING)
  const bytes = bytesOf(inputs, FLOWING_STRING)
  return [
    ratioRow('wave 2: streamed ≥ 0.6× fastq promise, integer keys', ratio(FLOWING_DEFAULT, 'streamed'), atLeast(0.6)),
    ratioRow('wave 2: streamed ≥ 0.6× fastq promise, string keys', ratio(FLOWING_STRING, 'streamed'), atLeast(0.6)),
    ratioRow(
      'wave 2: streamed ≥ 0.75× fastq promise, string keys (stretch)',
      ratio(FLOWING_STRING, 'streamed'),
      atLeast(0.75),
    ),
    ratioRow('wave 2: burst ≥ 3× fastq promise, integer keys', ratio(FLOWING_DEFAULT, 'burst'), atLeast(3)),
    ratioRow('wave 2: burst ≥ 3× fastq promise, string keys', ratio(FLOWING_STRING, 'burst'), atLeast(3)),
    row('wave 2: queue-wait p99 ≤ 0.5 ms, streamed, string keys', `${formatMs(p99)} ms`, p99, atMost(0.5)),
    row('wave 2: ≤ 140 B per queued message, string keys', `${bytes.toFixed(0)} B`, bytes, atMost(140)),
  ]
}

/** Wave 2's cost rows: features on, refusals, `metrics()`. */
function costRows(inputs: TargetInputs): Row[] {
  const { n, features } = inputs
  const find = (id: string) => features.find((r) => r.subject.id === id)
  const allOn = (mode: 'burst' | 'streamed'): number =>
    nsPerMessage(n, find(ALL_ON_ROW), mode) / nsPerMessage(n, find(PLAIN_ROW), mode)
  const refusalRows = inputs.refusals.map((r) => {
    const value = refusalNs(r)
    return row(`wave 2: refused \`tryPost\` ≤ 1 µs, ${r.kind.label}`, `${value.toFixed(0)} ns`, value, atMost(1000))
  })
  const built = inputs.refusals.length === 0 ? Number.NaN : inputs.refusals.reduce((sum, r) => sum + r.built, 0)
  const metricsRows = inputs.metrics.map((m) => {
    const value = metricsUs(m)
    return row(`wave 2: \`metrics()\` ≤ 10 µs, ${m.metricsCase.label}`, `${value.toFixed(2)} µs`, value, atMost(10))
  })
  return [
    ratioRow('wave 2: features on ≤ 1.5× plain, streamed', allOn('streamed'), atMost(1.5)),
    ratioRow('wave 2: features on ≤ 1.5× plain, burst', allOn('burst'), atMost(1.5)),
    ...refusalRows,
    row('wave 2: a refused `tryPost` builds no `Error` until `error` is read', `${built} built`, built, atMost(0)),
    ...metricsRows,
  ]
}

/** The targets table, with a line pointing to the suites that judge the other targets. */
export function targetsTable(inputs: TargetInputs): string {
  const table = renderTable(
    [
      { header: `BRIEF §5 target (\`${FLOWING_DEFAULT}\` unless named)`, align: 'left' },
      { header: 'this run', align: 'right' },
      { header: 'verdict', align: 'left' },
    ],
    [...firstWave(inputs), ...keyRows(inputs), ...costRows(inputs)],
  )
  return `${table}\n\n${OTHER_SUITES}`
}

const OTHER_SUITES =
  'The timing-wheel targets (schedule ≤ 150 ns, cancel ≤ 60 ns, fire ≤ 100 ns, ≤ 48 B per pending timer, never early) ' +
  'are judged in [RESULTS-timing-wheel.md](./RESULTS-timing-wheel.md) (`bench:wheel`), the watchdog’s (≤ 1 µs and ≤ 200 B ' +
  'per guarded message) in [RESULTS-watchdog.md](./RESULTS-watchdog.md) (`bench:watchdog`), and the backpressure admission ' +
  'decision (≤ 100 ns) in [RESULTS-flood.md](./RESULTS-flood.md) (`bench:flood`).'
