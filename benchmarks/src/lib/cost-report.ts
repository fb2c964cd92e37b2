/**
 * The cost tables: ns per message per feature against the plain row, ns per refused `tryPost`, and
 * µs per `metrics()` call.
 *
 * @module
 */
import { FEATURE_ROWS, PLAIN_ROW } from './features.js'
import { type MetricsResult, metricsUs } from './metrics-cost.js'
import { type RefusalResult, refusalNs } from './refusals.js'
import { type CaseResult, medianRate } from './report.js'
import { formatCount, formatRatio } from './stats.js'
import { renderTable } from './table.js'
import type { Mode } from './workload.js'

/** Median ns per message (post + drain) of a mode, or NaN without samples. */
export function nsPerMessage(n: number, result: CaseResult | undefined, mode: Mode): number {
  return result === undefined ? Number.NaN : 1e9 / medianRate(n, result[mode])
}

const ns = (value: number): string => (Number.isNaN(value) ? '—' : value.toFixed(0))

/** ns per message of every feature row, with its ratio to the plain row, streamed and burst. */
export function featureTable(n: number, results: readonly CaseResult[]): string {
  const plain = results.find((r) => r.subject.id === PLAIN_ROW)
  const base = { streamed: nsPerMessage(n, plain, 'streamed'), burst: nsPerMessage(n, plain, 'burst') }
  const rows = results.map((r) => {
    const row = FEATURE_ROWS.find((f) => f.id === r.subject.id)
    const streamed = nsPerMessage(n, r, 'streamed')
    const burst = nsPerMessage(n, r, 'burst')
    return [
      row?.label ?? r.subject.label,
      row?.sets ?? '',
      ns(streamed),
      formatRatio(streamed / base.streamed),
      ns(burst),
      formatRatio(burst / base.burst),
    ]
  })
  const table = renderTable(
    [
      { header: 'row', align: 'left' },
      { header: 'what it sets (over the plain row)', align: 'left' },
      { header: 'streamed ns/msg', align: 'right' },
      { header: '× plain', align: 'right' },
      { header: 'burst ns/msg', align: 'right' },
      { header: '× plain', align: 'right' },
    ],
    rows,
  )
  return `${table}\n\n${FEATURE_NOTES}`
}

const FEATURE_NOTES = [
  '- ns/msg: first post → loop idle, divided by N (post + drain), median of the runs; streamed = 1,000 posts',
  '  per event-loop turn, burst = all N posted in one synchronous loop, then drained.',
  '- Every row: `createLoop({ capacity: 2 × N, workers: 8 })` plus what the row sets, and the no-op async',
  '  handler. `logger` is left at its default (`console`) in every row, plain included; nothing fails, so',
  '  nothing is logged. In burst the backlog fills at most half the queue: backpressure stays `normal`.',
  '- Idempotency: the default ledger (`MemoryIdempotencyStore`, `maxKeys` 100,000) forgets the least',
  '  recently used *finished* key past 100,000 but never a key in flight. Streamed, it holds about',
  '  100,000 keys; in burst every key is in flight at once, so it holds all N (1M in a full run) until',
  '  their messages finish.',
].join('\n')

/** ns per refused `tryPost`, and the errors built on the result path. */
export function refusalTable(results: readonly RefusalResult[]): string {
  return renderTable(
    [
      { header: 'refused `tryPost`', align: 'left' },
      { header: 'setup', align: 'left' },
      { header: 'ns / call', align: 'right' },
      { header: 'errors built (probe pass)', align: 'right' },
    ],
    results.map((r) => [
      `${r.kind.label} (\`${r.kind.status}\`)`,
      r.kind.setup,
      ns(refusalNs(r)),
      `${r.built} in ${formatCount(r.probeCalls)} calls`,
    ]),
  )
}

/** µs per `metrics()` call. */
export function metricsTable(results: readonly MetricsResult[], fillCount: number): string {
  return renderTable(
    [
      { header: '`loop.metrics()`', align: 'left' },
      { header: 'µs / call', align: 'right' },
      { header: 'runs', align: 'left' },
    ],
    results.map((r) => [
      r.metricsCase.filled
        ? `after ${formatCount(fillCount)} messages (random keys, priorities 0–9)`
        : r.metricsCase.label,
      metricsUs(r).toFixed(2),
      r.samples.map((s) => s.toFixed(2)).join(', '),
    ]),
  )
}
