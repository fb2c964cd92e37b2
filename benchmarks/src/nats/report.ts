/**
 * The NATS suite's tables: throughput side by side (3 processes, 1 process, the core loop, ratios and
 * the target), post-to-start latency, and the kill -9 redelivery episodes.
 *
 * @module
 */
import { formatCount, formatRatio } from '../lib/stats.js'
import { type Column, renderTable } from '../lib/table.js'
import type { BullmqSample } from './bullmq-row.js'
import type { Episode, RunResult } from './runs.js'

/** The target: ordered msgs/s across 3 processes on a 2-core machine. */
export const TARGET_MSGS_PER_SEC = 8_000

/** Everything the suite measured. */
export interface Figures {
  readonly rows: readonly RunResult[]
  readonly core: {
    readonly burst: { readonly msgsPerSec: number; readonly violations: number }
    readonly live: { readonly msgsPerSec: number; readonly violations: number }
  }
  readonly latency: readonly {
    readonly n: number
    readonly perSecond: number
    readonly processes: number
    readonly partitions: number
    readonly p50: number
    readonly p99: number
    readonly max: number
    readonly violations: number
  }[]
  readonly episodes: readonly Episode[]
  /** BullMQ on the same no-op jobs, pre-added, one process (or why it did not run). */
  readonly bullmq: BullmqSample | string
  readonly ackWaitMs: number
  readonly n: number
  readonly keys: number
}

const cols = (headers: readonly string[]): Column[] =>
  headers.map((header, i) => ({ header, align: i === 0 ? 'left' : 'right' }))
const rate = (r: number) => formatCount(Math.round(r))
// A ratio far below 1 (a distributed loop against an in-memory one) reads best as a fraction: `1/230`.
const ratio = (x: number) => (x >= 0.1 ? formatRatio(x) : `1/${Math.round(1 / x)}`)

function throughputTable(f: Figures): string {
  const single = (mode: string, p: number) =>
    f.rows.find((r) => r.processes === 1 && r.mode === mode && r.partitions === p) ??
    f.rows.find((r) => r.processes === 1 && r.mode === mode)
  const rows = f.rows.map((r) => {
    const one = single(r.mode, r.partitions)
    const core = f.core[r.mode].msgsPerSec
    const target = r.processes === 3 ? (r.msgsPerSec >= TARGET_MSGS_PER_SEC ? '✔ ≥ 8,000' : '✘ < 8,000') : ''
    return [
      `NatsLoop × ${r.processes} process${r.processes === 1 ? '' : 'es'}`,
      String(r.partitions),
      r.mode === 'burst' ? 'pre-published' : 'while publishing',
      rate(r.msgsPerSec),
      r.range === undefined || r.range.rounds === 1
        ? '1 run'
        : `${r.range.rounds} runs, ${rate(r.range.min)}–${rate(r.range.max)}`,
      r.processes === 1 || one === undefined ? '—' : ratio(r.msgsPerSec / one.msgsPerSec),
      ratio(r.msgsPerSec / core),
      rate(r.publishPerSec),
      String(r.account.violations),
      r.account.perProcess.map(formatCount).join(' / '),
      `${r.cpu.workers.toFixed(0)} / ${r.cpu.server.toFixed(0)} / ${r.cpu.producer.toFixed(0)}`,
      target,
    ]
  })
  for (const mode of ['burst', 'live'] as const) {
    const c = f.core[mode]
    rows.push([
      'core createLoop (1 process, in memory)',
      '—',
      mode === 'burst' ? 'pre-posted' : 'while posting',
      rate(c.msgsPerSec),
      '1 run',
      '—',
      '1×',
      '—',
      String(c.violations),
      '—',
      '—',
      '',
    ])
  }
  const peer = f.bullmq
  if (typeof peer !== 'string') {
    const one = single('burst', 0)
    rows.push([
      'BullMQ Worker (1 process, Redis; no per-key order)',
      '—',
      'pre-added',
      rate(peer.msgsPerSec),
      '1 run',
      one === undefined ? '—' : `${ratio(one.msgsPerSec / peer.msgsPerSec)} (NatsLoop ÷ this)`,
      '—',
      '—',
      '—',
      formatCount(f.n),
      `${peer.cpuUsPerMsg.toFixed(0)} / — / —`,
      '',
    ])
  }
  return renderTable(
    cols([
      'row',
      'P',
      'publishing',
      'msgs/s',
      'median of',
      'vs 1 process',
      'vs core',
      'publish msgs/s',
      'order violations',
      'runs per process',
      'CPU µs/msg workers / server / producer',
      'target',
    ]),
    rows,
  )
}

function latencyTable(f: Figures): string {
  return renderTable(
    cols(['post → handler start', 'rate', 'messages', 'p50 ms', 'p99 ms', 'max ms', 'order violations']),
    f.latency.map((l) => [
      `${l.processes} processes, P=${l.partitions}`,
      `${formatCount(l.perSecond)}/s`,
      formatCount(l.n),
      l.p50.toFixed(2),
      l.p99.toFixed(2),
      l.max.toFixed(1),
      String(l.violations),
    ]),
  )
}

function redeliveryTable(f: Figures): string {
  return renderTable(
    cols([
      'kill -9 episode',
      'ackWaitMs',
      'held before kill ms',
      'kill → start elsewhere ms',
      'first start → second ms',
    ]),
    f.episodes.map((e, i) => [
      `#${i + 1}`,
      formatCount(f.ackWaitMs),
      e.heldBeforeKill.toFixed(0),
      e.killToStart.toFixed(0),
      e.firstToSecond.toFixed(0),
    ]),
  )
}

/** The three tables, as the console and the results file show them. */
export function figuresTables(f: Figures): string {
  return `Throughput — ${formatCount(f.n)} no-op messages over ${formatCount(f.keys)} keys (core: its own N, see below):\n\n${throughputTable(f)}\n\nLatency:\n\n${latencyTable(f)}\n\nRedelivery after kill -9:\n\n${redeliveryTable(f)}`
}
