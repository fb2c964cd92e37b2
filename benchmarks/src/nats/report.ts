/**
 * The NATS suite's tables: throughput side by side (3 processes, 1 process, the core loop, ratios and
 * the issue's target), post-to-start latency, and the kill -9 redelivery episodes.
 *
 * @module
 */
import { formatCount, formatRatio } from '../lib/stats.js'
import { type Column, renderTable } from '../lib/table.js'
import type { BullmqSample } from './bullmq-row.js'
import type { Episode, RunResult } from './runs.js'
import type { NodeKill } from './three-nodes.js'

/**
 * The issue's targets: ordered msgs/s in 1 process; 3 processes at least as fast as 1, for at most
 * 1.25× the CPU per message (the processes and the server).
 */
export const TARGET = { oneProcess: 20_000, cpuRatio: 1.25 } as const

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
  /** Beside BullMQ: NatsLoop in 1 and 3 processes and BullMQ (or why it did not run), per handler time. */
  readonly peers: {
    readonly keys: number
    readonly nats: readonly RunResult[]
    readonly bullmq: readonly BullmqSample[] | string
  }
  readonly ackWaitMs: number
  /** Messages of each throughput run. */
  readonly n: number
  /** Messages of the 3-node cluster's throughput row. */
  readonly clusterN: number
  readonly keys: number
  /** A node of the 3-node cluster killed under load, or why it did not run. */
  readonly nodeKill?: NodeKill | string
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
    const target = targetOf(r, one)
    return [
      `NatsLoop × ${r.processes} process${r.processes === 1 ? '' : 'es'}${r.replicas === 3 ? ' on a 3-node cluster (R3)' : ''}`,
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

// Work CPU per message: the processes' and the server's (the producer's is the same in every row).
const workCpu = (r: RunResult) => r.cpu.workers + r.cpu.server

function targetOf(r: RunResult, one: RunResult | undefined): string {
  if (r.processes === 1) {
    const n = formatCount(TARGET.oneProcess)
    return r.msgsPerSec >= TARGET.oneProcess ? `✔ ≥ ${n}` : `✘ < ${n}`
  }
  if (one === undefined) return ''
  const fast = r.msgsPerSec >= one.msgsPerSec ? '✔ ≥ 1×' : '✘ < 1×'
  const cpu = workCpu(r) / workCpu(one)
  return `${fast}; CPU ${formatRatio(cpu)} ${cpu <= TARGET.cpuRatio ? '✔' : '✘'}`
}

// NatsLoop (ordered) beside BullMQ (unordered) on the same jobs, per handler time.
function peersTable(f: Figures): string {
  const { nats, bullmq } = f.peers
  const rows: string[][] = []
  for (const r of nats) {
    const peer = typeof bullmq === 'string' ? undefined : bullmq.find((b) => b.handlerMs === r.handlerMs)
    rows.push([
      `NatsLoop × ${r.processes} process${r.processes === 1 ? '' : 'es'} (per-key order)`,
      r.handlerMs === 0 ? 'no-op' : `${r.handlerMs} ms`,
      rate(r.msgsPerSec),
      peer === undefined ? '—' : ratio(r.msgsPerSec / peer.msgsPerSec),
      `${r.cpu.workers.toFixed(0)} / ${r.cpu.server.toFixed(0)}`,
      String(r.account.violations),
    ])
  }
  for (const b of typeof bullmq === 'string' ? [] : bullmq) {
    rows.push([
      'BullMQ Worker × 1 process (no per-key order)',
      b.handlerMs === 0 ? 'no-op' : `${b.handlerMs} ms`,
      rate(b.msgsPerSec),
      '1×',
      `${b.cpuUsPerMsg.toFixed(0)} / — (Redis not counted)`,
      '—',
    ])
  }
  return renderTable(
    cols(['row', 'handler', 'msgs/s', 'vs BullMQ', 'CPU µs/msg process(es) / server', 'order violations']),
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

function nodeKillTable(k: NodeKill): string {
  return renderTable(
    cols([
      'node kill -9 (3 processes, R3)',
      'P',
      'msgs/s before',
      'kill → flowing again ms',
      'msgs/s until then',
      'longest pause ms',
      'kill → all run ms',
      'ran again',
      'first-run order violations',
      'reruns after a later message',
    ]),
    [
      [
        `${k.node} (partition 0's leader) at ${formatCount(k.ranAtKill)} of ${formatCount(k.n)}`,
        String(k.partitions),
        rate(k.before),
        k.recoveredMs.toFixed(0),
        rate(k.during),
        k.longestGapMs.toFixed(0),
        k.allRunMs.toFixed(0),
        formatCount(k.reruns),
        String(k.violations),
        String(k.rerunsOutOfOrder),
      ],
    ],
  )
}

/** The tables, as the console and the results file show them. */
export function figuresTables(f: Figures): string {
  const peers = `Beside BullMQ — ${formatCount(f.n)} pre-published jobs over ${formatCount(f.peers.keys)} keys, P=${f.peers.nats[0]?.partitions ?? '—'}, 8 workers (BullMQ: concurrency 8):`
  const skipped = typeof f.peers.bullmq === 'string' ? `\n\nBullMQ did not run: ${f.peers.bullmq}` : ''
  return `Throughput — ${formatCount(f.n)} no-op messages over ${formatCount(f.keys)} keys (core: its own N, see below):\n\n${throughputTable(f)}\n\n${peers}\n\n${peersTable(f)}${skipped}\n\nLatency:\n\n${latencyTable(f)}\n\nRedelivery after kill -9:\n\n${redeliveryTable(f)}${
    f.nodeKill === undefined
      ? ''
      : typeof f.nodeKill === 'string'
        ? `\n\nNode kill -9 on a 3-node cluster did not run: ${f.nodeKill}`
        : `\n\nA node of a 3-node cluster killed under load (restarted 2 s later) — ${formatCount(f.nodeKill.n)} pre-published no-op messages:\n\n${nodeKillTable(f.nodeKill)}`
  }`
}
