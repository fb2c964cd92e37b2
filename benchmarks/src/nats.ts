/**
 * `node dist/nats.js [--smoke]`: Flowing across processes on NATS JetStream, on a private nats-server —
 * ordered throughput of a keyed no-op workload across 3 worker processes (P = 8, 32, 64; pre-published
 * burst and published while running), the same in one process and on the in-process core loop beside
 * it, post-to-start latency at a steady rate, the redelivery time after `kill -9` of a worker that
 * holds a message, and beside BullMQ on 200 keys with no-op and 1 ms handlers. Without a `nats-server` binary the suite is skipped, saying why. Fails (exit 1) when a
 * count does not add up or per-key order is broken — never on speed.
 */
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { BenchError } from './lib/check.js'
import { UsageError } from './lib/cli.js'
import { codeRevision, describeMachine, formatMachine } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { type BullmqSample, bullmqRun } from './nats/bullmq-row.js'
import { type Figures, figuresTables } from './nats/report.js'
import { natsDocument } from './nats/results.js'
import {
  clusterRun,
  coreRun,
  type Episode,
  killEpisode,
  latencyRun,
  type Mode,
  type RunResult,
  type RunSpec,
  type Target,
} from './nats/runs.js'
import { INSTALL_HINT, startNats } from './nats/server.js'
import { type NodeKill, nodeKillRun, startNatsCluster } from './nats/three-nodes.js'

const RESULTS = new URL('../RESULTS-nats.md', import.meta.url)
const USAGE = 'usage: node dist/nats.js [--smoke]'

/** The suite's sizes: full, or smoke (every path, a few seconds). */
export function natsWorkload(smoke: boolean) {
  return {
    /**
     * Messages of a throughput run: enough that each process's start-up and JIT warm-up are a small
     * part of it (at 10,000, three processes each ran a third of the run in cold code).
     */
    n: smoke ? 2_000 : 100_000,
    /** Messages of the 3-node cluster's row (three times as many for its node kill): replication is slow. */
    clusterN: smoke ? 2_000 : 10_000,
    keys: 1_000,
    workers: 8,
    partitions: smoke ? [8] : [32, 8, 64],
    /** The P of the rows run `rounds` times (the others once), of the 1-process rows and of latency. */
    headline: smoke ? 8 : 32,
    rounds: smoke ? 1 : 3,
    /** Steady rates well below the 3-process throughput: the latency of a loop that keeps up. */
    latency: smoke
      ? [{ n: 300, perSecond: 200 }]
      : [
          { n: 2_000, perSecond: 200 },
          { n: 3_000, perSecond: 500 },
        ],
    /** Beside BullMQ: fewer keys, no-op and 1 ms handlers, pre-published, 1 and 3 processes. */
    peers: { keys: 200, handlerMs: [0, 1] },
    ackWaitMs: smoke ? 1_000 : 2_000,
    episodes: smoke ? [0] : [0, 0, 0, 1_000],
  }
}

function logRun(r: RunResult): void {
  const a = r.account
  process.stdout.write(
    `  ${r.processes} proc P=${r.partitions} ${r.mode}: ${Math.round(r.msgsPerSec)} msgs/s, ${a.violations} order violations, per process ${a.perProcess.join('/')}; CPU µs/msg workers ${r.cpu.workers.toFixed(0)}, server ${r.cpu.server.toFixed(0)}, producer ${r.cpu.producer.toFixed(0)}\n`,
  )
}

/** `rounds` runs of one spec: the median run by msgs/s, with the range and every round's violations. */
async function measured(server: Target, spec: RunSpec, rounds: number): Promise<RunResult> {
  const results: RunResult[] = []
  for (let i = 0; i < rounds; i++) {
    const r = await clusterRun(server, spec)
    logRun(r)
    results.push(r)
  }
  const sorted = [...results].sort((a, b) => a.msgsPerSec - b.msgsPerSec)
  const mid = sorted[sorted.length >> 1] as RunResult
  const violations = results.reduce((sum, r) => sum + r.account.violations, 0)
  const range = { min: sorted[0]?.msgsPerSec ?? 0, max: sorted[sorted.length - 1]?.msgsPerSec ?? 0, rounds }
  return { ...mid, account: { ...mid.account, violations }, range }
}

async function throughput(server: Target, w: ReturnType<typeof natsWorkload>, smoke: boolean) {
  const rows: RunResult[] = []
  const base = { n: w.n, keys: w.keys, workers: w.workers, handlerMs: 0 }
  for (const partitions of w.partitions) {
    for (const mode of ['burst', 'live'] as const satisfies readonly Mode[]) {
      const rounds = partitions === w.headline ? w.rounds : 1
      rows.push(await measured(server, { ...base, processes: 3, partitions, mode }, rounds))
    }
  }
  for (const mode of ['burst', 'live'] as const satisfies readonly Mode[]) {
    rows.push(await measured(server, { ...base, processes: 1, partitions: w.headline, mode }, w.rounds))
  }
  const core = {
    burst: await coreRun(smoke ? w.n : 200_000, w.keys, 'burst', w.workers),
    live: await coreRun(smoke ? w.n : 200_000, w.keys, 'live', w.workers),
  }
  return { rows, core }
}

// The peer workload: NatsLoop in 1 and 3 processes (ordered) and BullMQ (no per-key order), per handler time.
async function peers(server: Target, w: ReturnType<typeof natsWorkload>): Promise<Figures['peers']> {
  const nats: RunResult[] = []
  const bullmq: BullmqSample[] = []
  for (const handlerMs of w.peers.handlerMs) {
    for (const processes of [1, 3]) {
      const spec = { n: w.n, keys: w.peers.keys, workers: w.workers, handlerMs, processes, partitions: w.headline }
      nats.push(await measured(server, { ...spec, mode: 'burst' }, 1))
    }
    const b = await bullmqRun(w.n, w.workers, handlerMs)
    if (typeof b === 'string') return { keys: w.peers.keys, nats, bullmq: b }
    process.stdout.write(
      `  BullMQ ${handlerMs} ms: ${Math.round(b.msgsPerSec)} msgs/s, ${b.cpuUsPerMsg.toFixed(0)} µs CPU/job\n`,
    )
    bullmq.push(b)
  }
  return { keys: w.peers.keys, nats, bullmq }
}

// On a 3-node cluster (streams and buckets at R3): the pre-published row, and a node killed under load.
async function threeNodes(
  w: ReturnType<typeof natsWorkload>,
): Promise<{ row?: RunResult; nodeKill: NodeKill | string }> {
  const started = await startNatsCluster()
  if (!started.ok) return { nodeKill: started.reason }
  const { cluster } = started
  try {
    const target = { url: cluster.urls, cpuMs: () => cluster.cpuMs() }
    const spec = { n: w.clusterN, keys: w.keys, workers: w.workers, handlerMs: 0, processes: 3, partitions: w.headline }
    const row = await measured(target, { ...spec, mode: 'burst', replicas: 3 }, 1)
    const k = await nodeKillRun(cluster, 3 * w.clusterN, w.keys, w.headline)
    process.stdout.write(
      `  node ${k.node} killed: ${Math.round(k.before)} msgs/s before, flowing again after ${k.recoveredMs.toFixed(0)} ms (${Math.round(k.during)} msgs/s until then), all run after ${k.allRunMs.toFixed(0)} ms\n`,
    )
    return { row, nodeKill: k }
  } finally {
    await cluster.stop()
  }
}

async function main(args: string[]): Promise<void> {
  const unknown = args.filter((a) => a !== '--smoke')
  if (unknown.length > 0) throw new UsageError(`Unknown argument \`${unknown[0]}\``)
  const smoke = args.includes('--smoke')
  const started = performance.now()
  const machine = formatMachine(describeMachine())
  const nats = await startNats()
  if (!nats.ok) {
    console.log(`NATS suite skipped — ${nats.reason}. To run it, install a nats-server:\n${INSTALL_HINT}`)
    return
  }
  const w = natsWorkload(smoke)
  try {
    console.log(`NATS JetStream — ${nats.server.description}, on ${nats.server.url}\n`)
    const { rows, core } = await throughput(nats.server, w, smoke)
    const latency = []
    for (const l of w.latency) {
      const r = await latencyRun(nats.server.url, 3, w.headline, l.n, l.perSecond)
      process.stdout.write(`  latency at ${l.perSecond}/s: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms\n`)
      latency.push(r)
    }
    const episodes: Episode[] = []
    for (const killAfter of w.episodes) {
      const e = await killEpisode(nats.server.url, w.ackWaitMs, killAfter)
      process.stdout.write(
        `  kill -9 after ${e.heldBeforeKill.toFixed(0)} ms held: redelivered ${e.killToStart.toFixed(0)} ms after the kill\n`,
      )
      episodes.push(e)
    }
    let violations = [...rows.map((r) => r.account.violations), ...latency.map((l) => l.violations)].reduce(
      (a, b) => a + b,
      0,
    )
    const peer = await peers(nats.server, w)
    if (typeof peer.bullmq === 'string') console.log(`  BullMQ rows skipped — ${peer.bullmq}`)
    violations += peer.nats.reduce((sum, r) => sum + r.account.violations, 0)
    const onThree = await threeNodes(w)
    if (onThree.row !== undefined) {
      rows.push(onThree.row)
      violations += onThree.row.account.violations
    }
    if (typeof onThree.nodeKill === 'string') console.log(`  3-node cluster rows skipped — ${onThree.nodeKill}`)
    else violations += onThree.nodeKill.violations
    const figures: Figures = {
      rows,
      core,
      latency,
      episodes,
      peers: peer,
      ackWaitMs: w.ackWaitMs,
      n: w.n,
      clusterN: w.clusterN,
      keys: w.keys,
      nodeKill: onThree.nodeKill,
    }
    const tables = figuresTables(figures)
    console.log(`\n${tables}`)
    if (violations > 0) throw new BenchError(`${violations} per-key order violations`)
    if (!smoke) {
      writeFileSync(
        RESULTS,
        natsDocument({
          revision: codeRevision(),
          machine,
          loadAtEnd: loadavg()[0] ?? 0,
          server: nats.server.description,
          seconds: (performance.now() - started) / 1000,
          figures,
          tables,
        }),
      )
      console.log(`\nWrote ${RESULTS.pathname}`)
    }
  } finally {
    await nats.server.stop()
  }
}

runSuite('nats', USAGE, main)
