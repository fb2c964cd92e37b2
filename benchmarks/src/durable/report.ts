/**
 * The durable suite's tables: every row side by side (throughput, ratio to in-memory, acknowledgement
 * latencies, journal size, commits per second), the targets beside the figures, and the soak's
 * samples.
 *
 * @module
 */
import { formatCount, formatMs, formatRatio, median } from '../lib/stats.js'
import { renderTable } from '../lib/table.js'
import type { BatchedSample, SinglesSample } from './flowing-run.js'
import type { Target } from './journals.js'
import type { SoakResult } from './soak.js'
import { quantile } from './workload.js'

/** One row's figures over the run: a sample per round, or why the row is missing. */
export interface RowResult {
  readonly id: string
  readonly label: string
  readonly target?: Target
  readonly batched: readonly BatchedSample[]
  readonly singles?: SinglesSample
  readonly missing?: string
}

/** `1.2 KB`, `58.3 MB`; `—` when unknown. */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '—'
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`
  return `${(bytes / 2 ** 20).toFixed(1)} MB`
}

/** Messages per second as `123k` / `4.5k` / `812`. */
export function formatPerSec(perSec: number): string {
  if (perSec >= 100_000) return `${(perSec / 1000).toFixed(0)}k`
  if (perSec >= 1_000) return `${(perSec / 1000).toFixed(1)}k`
  return perSec.toFixed(0)
}

/** The median round's throughput of a row (0 if it has none). */
export function rate(r: RowResult): number {
  return r.batched.length === 0 ? 0 : median(r.batched.map((b) => b.msgsPerSec))
}

function pair(values: readonly number[]): string {
  return values.length === 0 ? '—' : `${formatMs(quantile(values, 0.5))} / ${formatMs(quantile(values, 0.99))}`
}

function commitsPerSec(r: RowResult): string {
  const rounds = r.batched.filter((b) => b.written !== undefined)
  if (rounds.length === 0) return '—'
  return formatPerSec(median(rounds.map((b) => (b.written?.commits ?? 0) / b.seconds)))
}

function size(r: RowResult): string {
  const peak = Math.max(...r.batched.map((b) => b.peakBytes ?? -1))
  const end = r.batched.at(-1)?.endBytes
  if (end === undefined) return '—'
  return peak > end ? `${formatBytes(end)} (peak ${formatBytes(peak)})` : formatBytes(end)
}

/** A row against its target, each part with its own mark: `≥ 100k/s ✘ (29.3k), ≥ 0.1× in-memory ✔ (0.11×)`. */
export function verdict(r: RowResult, baseline: number): string {
  const t = r.target
  if (t === undefined) return ''
  const perSec = rate(r)
  const mark = (ok: boolean) => (ok ? '✔' : '✘')
  const parts = [`≥ ${formatPerSec(t.msgsPerSec)}/s ${mark(perSec >= t.msgsPerSec)} (${formatPerSec(perSec)})`]
  if (t.ofInMemory !== undefined) {
    const ratio = perSec / baseline
    parts.push(`≥ ${t.ofInMemory}× in-memory ${mark(ratio >= t.ofInMemory)} (${formatRatio(ratio)})`)
  }
  return parts.join(', ')
}

/** Message rows written (put or removed) per message handled, median over the rounds; `—` without a journal. */
function rowsPerMessage(r: RowResult): string {
  const rounds = r.batched.filter((b) => b.written !== undefined)
  if (rounds.length === 0) return '—'
  const per = (b: BatchedSample) => ((b.written?.puts ?? 0) + (b.written?.removes ?? 0)) / (b.msgsPerSec * b.seconds)
  return median(rounds.map(per)).toFixed(2)
}

/** The main table: every row of the batched and one-at-a-time modes. */
export function mainTable(rows: readonly RowResult[]): string {
  const baseline = rate(rows[0] as RowResult)
  return renderTable(
    [
      { header: 'journal', align: 'left' },
      { header: 'msgs/s', align: 'right' },
      { header: '× in-memory', align: 'right' },
      { header: 'burst ack p50 / p99 ms', align: 'right' },
      { header: 'single ack p50 / p99 ms', align: 'right' },
      { header: 'singles/s', align: 'right' },
      { header: 'journal at the end', align: 'right' },
      { header: 'rows written per message', align: 'right' },
      { header: 'commits/s', align: 'right' },
      { header: 'target (issue)', align: 'left' },
    ],
    rows.map((r) => {
      if (r.missing !== undefined) return [r.label, '—', '—', '—', '—', '—', '—', '—', '—', `missing: ${r.missing}`]
      const perSec = rate(r)
      return [
        r.label,
        formatPerSec(perSec),
        formatRatio(perSec / baseline),
        pair(r.batched.flatMap((b) => b.acks)),
        pair(r.singles?.acks ?? []),
        r.singles === undefined ? '—' : formatPerSec(r.singles.acksPerSec),
        size(r),
        rowsPerMessage(r),
        commitsPerSec(r),
        verdict(r, baseline),
      ]
    }),
  )
}

/** The plain no-op handler's table: what the journal writes when a burst finishes within its turn. */
export function microtaskTable(rows: readonly RowResult[]): string {
  const present = rows.filter((r) => r.missing === undefined && r.batched.length > 0)
  const baseline = rate(present[0] as RowResult)
  return renderTable(
    [
      { header: 'journal', align: 'left' },
      { header: 'msgs/s', align: 'right' },
      { header: '× in-memory', align: 'right' },
      { header: 'burst ack p50 / p99 ms', align: 'right' },
      { header: 'rows written per message', align: 'right' },
      { header: 'commits/s', align: 'right' },
      { header: 'target (issue)', align: 'left' },
    ],
    present.map((r) => {
      const perSec = rate(r)
      return [
        r.label,
        formatPerSec(perSec),
        formatRatio(perSec / baseline),
        pair(r.batched.flatMap((b) => b.acks)),
        rowsPerMessage(r),
        commitsPerSec(r),
        verdict(r, baseline),
      ]
    }),
  )
}

/** The soak's samples, one line each. */
export function soakTable(soak: SoakResult): string {
  return renderTable(
    [
      { header: 't (s)', align: 'right' },
      { header: 'posted', align: 'right' },
      { header: 'handled', align: 'right' },
      { header: 'backlog (rows)', align: 'right' },
      { header: 'db', align: 'right' },
      { header: '-wal', align: 'right' },
      { header: 'db + wal', align: 'right' },
    ],
    soak.samples.map((s) => [
      s.atS.toFixed(1),
      formatCount(s.posted),
      formatCount(s.handled),
      formatCount(s.backlog),
      formatBytes(s.dbBytes),
      formatBytes(s.walBytes),
      formatBytes(s.dbBytes + s.walBytes),
    ]),
  )
}

/** One line on whether the soak's file stayed bounded: the largest size in each half of the run. */
export function soakSummary(soak: SoakResult): string {
  const o = soak.options
  const running = soak.samples.slice(1, -1)
  const half = o.durationMs / 2000
  const max = (xs: typeof running) => Math.max(0, ...xs.map((s) => s.dbBytes + s.walBytes))
  const first = max(running.filter((s) => s.atS < half))
  const second = max(running.filter((s) => s.atS >= half))
  const bounded = second <= first * 1.25 + 1024 * 1024
  return [
    `${formatCount(soak.posted)} messages through the journal in ${o.durationMs / 1000} s (${formatCount(o.ratePerSec)}/s, ${o.delayedShare * 100} % delayed by ${o.delayMs} ms), ${formatCount(soak.commits)} commits;`,
    `acknowledgement of each 10 ms tick p50 ${formatMs(soak.ackP50)} ms / p99 ${formatMs(soak.ackP99)} ms.`,
    `Largest db + wal in the first half ${formatBytes(first)}, in the second half ${formatBytes(second)}: ${bounded ? '✔ bounded' : '✘ still growing'};`,
    `after the stop (checkpointed, \`-wal\` removed) ${formatBytes(soak.closedBytes)}.`,
  ].join(' ')
}
