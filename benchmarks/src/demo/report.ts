/** Terminal output for the demo: one live line per tick and a closing metrics table. */
import type { MetricsSnapshot } from '@flowing/core'
import { type Column, renderTable } from '../lib/table.js'

/** An aligned table: the first column left, the figures right. */
function table(header: string[], rows: (string | number)[][]): string {
  const columns: Column[] = header.map((h, i) => ({ header: h, align: i === 0 ? 'left' : 'right' }))
  return renderTable(
    columns,
    rows.map((r) => r.map(String)),
  )
}

const ms = (v: number) => (v < 1 ? `${(v * 1000).toFixed(0)}µs` : `${v.toFixed(1)}ms`)

/** A fixed-width live status line. */
export function liveLine(elapsedMs: number, phase: string, m: MetricsSnapshot): string {
  const { gauges: g, counters: c } = m
  const bar = '█'.repeat(Math.round(g.fill * 20)).padEnd(20, '·')
  return [
    `${(elapsedMs / 1000).toFixed(1).padStart(5)}s`,
    phase.padEnd(9),
    `queue ${bar} ${String(g.queued).padStart(5)}/${g.capacity}`,
    `run ${String(g.running).padStart(2)}/${g.workers}`,
    `ok ${String(c.succeeded).padStart(6)}`,
    `dead ${String(c.deadLettered).padStart(4)}`,
    `drop ${String(c.dropped).padStart(5)}`,
    `rej ${String(c.rejected).padStart(5)}`,
    `wait p99 ${ms(m.queueWait.p99).padStart(8)}`,
  ].join('  ')
}

/** The closing report: counters, the I1 balance, and latency percentiles per priority. */
export function closingReport(m: MetricsSnapshot): string {
  const c = m.counters
  const outcomes = c.succeeded + c.deadLettered + c.dropped + c.cancelled + c.snapshotted
  const counters = table(
    ['counter', 'value'],
    Object.entries(c).map(([k, v]) => [k, v]),
  )
  const balance = `posted ${c.posted} = accepted ${c.accepted} + rejected ${c.rejected}  ${
    c.posted === c.accepted + c.rejected ? '✔' : '✘'
  }\naccepted ${c.accepted} = outcomes ${outcomes}  ${c.accepted === outcomes ? '✔' : '✘'}`
  const latency = table(
    ['histogram', 'count', 'p50', 'p90', 'p99', 'max'],
    [
      ['queue wait (all)', m.queueWait],
      ...m.queueWaitByPriority.map((h, p) => [`queue wait p=${p}`, h] as const).filter(([, h]) => h.count > 0),
      ['handler time', m.handlerTime],
    ].map(([name, h]) => {
      const s = h as MetricsSnapshot['queueWait']
      return [name as string, s.count, ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max)]
    }),
  )
  return `${counters}\n\n${balance}\n\n${latency}`
}
