/**
 * The runs of the NATS suite: a keyed no-op workload across worker processes (pre-published burst, or
 * published while they run), the same on the in-process core loop, a steady rate for post-to-start
 * latency, and the kill -9 episodes that time a redelivery.
 *
 * @module
 */
import { createLoop } from '@flowing/core'
import { BenchError, expectEqual } from '../lib/check.js'
import { account, quantile, type RunAccount } from './analysis.js'
import { emptied, Jobs, producer, spawnWorkers, startWorkers, type Worker } from './cluster.js'
import { epochNow, type JobMessages, type WorkerConfig } from './protocol.js'

/** Burst: everything stored before the workers start. Live: published while they run. */
export type Mode = 'burst' | 'live'

/** One throughput run's shape. */
export interface RunSpec {
  readonly processes: number
  readonly partitions: number
  readonly mode: Mode
  readonly n: number
  readonly keys: number
  /** Local workers per process. */
  readonly workers: number
  /** How long each handler takes (ms; 0: a no-op). */
  readonly handlerMs: number
  /** Stream and bucket replicas: 3 on the 3-node cluster. @defaultValue 1 */
  readonly replicas?: number
}

/** One throughput run's figures. */
export interface RunResult extends RunSpec {
  readonly msgsPerSec: number
  readonly seconds: number
  /** The producer's publish rate (stored, acknowledged by the server). */
  readonly publishPerSec: number
  readonly account: RunAccount
  readonly redelivered: number
  /** CPU per message (µs) over the timed window's run: the workers together, the server, the producer. */
  readonly cpu: { readonly workers: number; readonly server: number; readonly producer: number }
  /** Over several rounds (this is the median one): the lowest and highest msgs/s. */
  readonly range?: { readonly min: number; readonly max: number; readonly rounds: number }
}

/** The server a run talks to. */
export interface Target {
  readonly url: string | readonly string[]
  cpuMs(): number
}

const ownCpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

async function workersCpuMs(workers: readonly Worker[]): Promise<number> {
  const reports = await Promise.all(workers.map((w) => w.ask({ type: 'report' }, 'report')))
  return reports.reduce((sum, r) => sum + r.counters.cpuMs, 0)
}

let runs = 0
function configOf(
  url: string | readonly string[],
  partitions: number,
  workers: number,
  ackWaitMs: number,
  handlerMs = 0,
  replicas = 1,
): WorkerConfig {
  return { servers: url, name: `bench-${process.pid}-${++runs}`, partitions, workers, ackWaitMs, handlerMs, replicas }
}

async function finish(workers: readonly Worker[]) {
  const reports = await Promise.all(workers.map((w) => w.ask({ type: 'report' }, 'report')))
  await Promise.all(workers.map((w) => w.stop()))
  return reports
}

/** A run across `spec.processes` worker processes. */
export async function clusterRun(server: Target, spec: RunSpec): Promise<RunResult> {
  const config = configOf(server.url, spec.partitions, spec.workers, 30_000, spec.handlerMs, spec.replicas)
  const prod = await producer(config)
  const workers = await spawnWorkers(spec.processes, config)
  try {
    const jobs = new Jobs(prod, spec.keys)
    let from = 0
    let published = 0
    const cpu0 = { workers: await workersCpuMs(workers), server: server.cpuMs(), producer: ownCpuMs() }
    if (spec.mode === 'burst') {
      const t0 = epochNow()
      await jobs.burst(spec.n)
      published = epochNow() - t0
      await startWorkers(workers)
    } else {
      await startWorkers(workers)
      from = epochNow()
      await jobs.burst(spec.n)
      published = epochNow() - from
    }
    await emptied(prod, 120_000)
    const cpu = {
      workers: ((await workersCpuMs(workers)) - cpu0.workers) * (1000 / spec.n),
      server: (server.cpuMs() - cpu0.server) * (1000 / spec.n),
      producer: (ownCpuMs() - cpu0.producer) * (1000 / spec.n),
    }
    const reports = await finish(workers)
    const acc = account(reports.map((r) => r.records))
    expectEqual(`${spec.processes} processes, P=${spec.partitions} ${spec.mode}: messages run`, acc.distinct, spec.n)
    const seconds = (acc.lastEnd - (spec.mode === 'burst' ? acc.firstStart : from)) / 1000
    const redelivered = reports.reduce((sum, r) => sum + r.counters.redelivered, 0)
    const publishPerSec = spec.n / (published / 1000)
    return { ...spec, msgsPerSec: spec.n / seconds, seconds, publishPerSec, account: acc, redelivered, cpu }
  } finally {
    await Promise.all(workers.map((w) => w.stop()))
    await prod.stop()
  }
}

/** The same workload on the in-process core loop: msgs/s and per-key order violations. */
export async function coreRun(n: number, keys: number, mode: Mode, workers: number) {
  const loop = createLoop<JobMessages>({ workers, capacity: n, autoStart: mode === 'live', logger: false })
  const last = new Int32Array(keys).fill(-1)
  let violations = 0
  let done = 0
  loop.on('job', async (m) => {
    if (m.payload.ks < (last[m.payload.ki] ?? 0)) violations++
    last[m.payload.ki] = m.payload.ks
    done++
  })
  const t0 = performance.now()
  for (let seq = 0; seq < n; seq++) {
    const ki = seq % keys
    loop.post('job', { ki, ks: Math.floor(seq / keys), seq, at: 0 }, { key: `key-${ki}` })
  }
  const t1 = performance.now()
  if (mode === 'burst') loop.start()
  await loop.drain()
  const seconds = (performance.now() - (mode === 'burst' ? t1 : t0)) / 1000
  await loop.stop()
  expectEqual(`core loop ${mode}: messages run`, done, n)
  return { msgsPerSec: n / seconds, seconds, violations }
}

/** Post-to-start latency at a steady rate across `processes` workers. */
export async function latencyRun(url: string, processes: number, partitions: number, n: number, perSecond: number) {
  const config = configOf(url, partitions, 8, 30_000)
  const prod = await producer(config)
  const workers = await spawnWorkers(processes, config)
  try {
    await startWorkers(workers)
    await new Jobs(prod, 1000).steady(n, perSecond)
    await emptied(prod, 60_000)
    const acc = account((await finish(workers)).map((r) => r.records))
    expectEqual('latency run: messages run', acc.distinct, n)
    const l = acc.latencies
    return {
      n,
      perSecond,
      processes,
      partitions,
      p50: quantile(l, 0.5),
      p99: quantile(l, 0.99),
      max: quantile(l, 1),
      violations: acc.violations,
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()))
    await prod.stop()
  }
}

/** One kill -9 episode's timings (ms). */
export interface Episode {
  /** From the kill to the message's start in another process. */
  readonly killToStart: number
  /** From its first start (in the killed process) to its start in another. */
  readonly firstToSecond: number
  /** How long the killed process held it before the kill. */
  readonly heldBeforeKill: number
}

function holdingIn(workers: readonly Worker[], except: number | undefined, ms: number) {
  return new Promise<{ worker: Worker; at: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new BenchError(`no worker took the held message within ${ms} ms`)), ms)
    for (const worker of workers) {
      if (worker.pid === except) continue
      worker.on((r) => {
        if (r.type !== 'holding') return false
        clearTimeout(timer)
        resolve({ worker, at: r.at })
        return true
      })
    }
  })
}

/** A worker holds a message; it is killed `killAfterMs` later; another process gets it after ack_wait. */
export async function killEpisode(url: string, ackWaitMs: number, killAfterMs: number): Promise<Episode> {
  const config = configOf(url, 8, 8, ackWaitMs)
  const prod = await producer(config)
  const workers = await spawnWorkers(3, config)
  try {
    await startWorkers(workers)
    const first = holdingIn(workers, undefined, 10_000)
    await new Jobs(prod, 1).post(true)
    const holder = await first
    if (killAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, killAfterMs))
    const second = holdingIn(workers, holder.worker.pid, ackWaitMs * 3 + 5_000)
    holder.worker.kill9()
    const killedAt = epochNow()
    const other = await second
    other.worker.send({ type: 'release' })
    await emptied(prod, 10_000)
    return {
      killToStart: other.at - killedAt,
      firstToSecond: other.at - holder.at,
      heldBeforeKill: killedAt - holder.at,
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()))
    await prod.stop()
  }
}
