/**
 * A private three-node nats-server cluster for the NATS suite — the single server of `server.ts`
 * three times over: free client and route ports on 127.0.0.1, a store, a log and a `server_name`
 * (`n0` … `n2`) each, one cluster name, routes to the other two — and the node kill -9 episode run on
 * it: three worker processes on streams at `replicas: 3` run a pre-published keyed no-op workload, the
 * node that leads the work stream is killed under load and restarted two seconds later, and the
 * handler starts every process recorded tell how long the messages stopped and at what rate they ran
 * before, during and after.
 *
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../durable/servers.js'
import { BenchError } from '../lib/check.js'
import { account } from './analysis.js'
import { Jobs, producer, spawnWorkers, startWorkers, type Worker } from './cluster.js'
import { epochNow, type Records } from './protocol.js'
import { cpuOf, halt, natsBinary, waitReady } from './server.js'

const NODES = 3
// The three elect a JetStream meta leader within a second on an idle machine; a restarted node
// rejoins within a few.
const READY_MS = 30_000

/** A running three-node cluster. */
export interface NatsCluster {
  /** Every node's `127.0.0.1:<port>`. */
  readonly urls: readonly string[]
  /** `nats-server v2.9.10 × 3 (one cluster, JetStream file stores in temp dirs)`. */
  readonly description: string
  /** The nodes' `server_name`s, by index (what a stream's `cluster.leader` says). */
  readonly names: readonly string[]
  /** CPU time the three nodes used so far (user + system, ms; a killed node's up to its kill). */
  cpuMs(): number
  /** The `server_name` of a stream's leader. */
  leaderOf(stream: string): Promise<string>
  /** `kill -9` of node `i` (its store stays). */
  kill9(i: number): void
  /** Starts node `i` again on its ports and store; resolves once it answers JetStream requests. */
  restart(i: number): Promise<void>
  /** Stops the three and removes their directory. */
  stop(): Promise<void>
}

/** The cluster, or why there is none. */
export type StartedCluster =
  | { readonly ok: true; readonly cluster: NatsCluster }
  | { readonly ok: false; readonly reason: string }

// What a node's monitoring endpoint says of JetStream (`/jsz`), in the parts read here.
interface Jsz {
  readonly meta_cluster?: { readonly leader?: string }
  readonly account_details?: readonly {
    readonly stream_detail?: readonly { readonly name: string; readonly cluster?: { readonly leader?: string } }[]
  }[]
}

async function jsz(port: number, query = ''): Promise<Jsz> {
  const response = await fetch(`http://127.0.0.1:${port}/jsz${query}`, { signal: AbortSignal.timeout(2_000) })
  return (await response.json()) as Jsz
}

// Resolves once the node's monitoring endpoint names a JetStream meta leader (it serves JetStream).
async function jetStreamReady(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    const leader = await jsz(port).then(
      (j) => j.meta_cluster?.leader,
      () => undefined,
    )
    if (leader !== undefined && leader !== '') return
    if (Date.now() > deadline) throw new Error(`no JetStream meta leader on monitoring port ${port} within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Starts three routed nats-servers with JetStream and waits until each answers JetStream requests. */
export async function startNatsCluster(): Promise<StartedCluster> {
  const binary = natsBinary()
  if (binary === undefined) return { ok: false, reason: 'no `nats-server` binary ($NATS_SERVER_BIN, PATH, /usr/sbin)' }
  const dir = mkdtempSync(join(tmpdir(), 'flowing-nats-cluster-bench-'))
  const ports = new Set<number>()
  while (ports.size < 3 * NODES) ports.add(await freePort())
  const [client, route, http] = [0, 1, 2].map((k) => [...ports].slice(k * NODES, (k + 1) * NODES)) as [
    number[],
    number[],
    number[],
  ]
  const names = Array.from({ length: NODES }, (_, i) => `n${i}`)
  const children: (ChildProcess | undefined)[] = []
  const cpuOfKilled = Array.from({ length: NODES }, () => 0)
  const launches = Array.from({ length: NODES }, () => 0)
  const log = (i: number) => join(dir, `${names[i]}-${launches[i]}.log`) // one per launch: "ready" is new
  const launch = (i: number): ChildProcess => {
    launches[i] = (launches[i] ?? 0) + 1
    const routes = route.filter((_, j) => j !== i).map((p) => `nats://127.0.0.1:${p}`)
    const args = ['-a', '127.0.0.1', '-p', String(client[i]), '-m', String(http[i])]
    args.push('-js', '-sd', join(dir, `store-${i}`), '-l', log(i))
    args.push('--server_name', names[i] as string, '--cluster_name', `bench-${process.pid}`)
    args.push('--cluster', `nats://127.0.0.1:${route[i]}`, '--routes', routes.join(','))
    const child = spawn(binary, args, { stdio: 'ignore' })
    children[i] = child
    return child
  }
  const killAll = () => {
    for (const c of children) c?.kill('SIGKILL')
  }
  process.once('exit', killAll)
  const urls = client.map((p) => `127.0.0.1:${p}`)
  const ready = async (i: number, child: ChildProcess) => {
    await waitReady(child, client[i] as number, log(i), READY_MS)
    await jetStreamReady(http[i] as number, READY_MS)
  }
  try {
    await Promise.all(names.map((_, i) => ready(i, launch(i))))
  } catch (error) {
    killAll()
    process.off('exit', killAll)
    rmSync(dir, { recursive: true, force: true })
    return { ok: false, reason: `the nats-server cluster did not start (${(error as Error).message})` }
  }
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()
  const cluster: NatsCluster = {
    urls,
    names,
    description: `${version} × ${NODES} (one cluster, JetStream file stores in temp dirs)`,
    cpuMs: () => children.reduce((sum, c, i) => sum + (cpuOfKilled[i] ?? 0) + (c === undefined ? 0 : cpuOf(c.pid)), 0),
    async leaderOf(stream) {
      const i = children.findIndex((c) => c !== undefined)
      const found = await jsz(http[i] as number, '?accounts=true&streams=true')
      const streams = (found.account_details ?? []).flatMap((a) => a.stream_detail ?? [])
      return streams.find((s) => s.name === stream)?.cluster?.leader ?? ''
    },
    kill9(i) {
      const child = children[i]
      cpuOfKilled[i] = (cpuOfKilled[i] ?? 0) + cpuOf(child?.pid)
      child?.kill('SIGKILL')
      children[i] = undefined
    },
    async restart(i) {
      await ready(i, launch(i))
    },
    async stop() {
      process.off('exit', killAll)
      await Promise.all(children.map((c) => (c === undefined ? undefined : halt(c))))
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return { ok: true, cluster }
}

/** What the node kill -9 episode measured (ms, msgs/s). */
export interface NodeKill {
  readonly n: number
  readonly partitions: number
  /** The node killed (partition 0's stream leader), and when in the run (messages run by then). */
  readonly node: string
  readonly ranAtKill: number
  /** Handler starts per second over the second before the kill. */
  readonly before: number
  /** From the kill to the end of the longest pause after it: messages flow again. */
  readonly recoveredMs: number
  /** Handler starts per second from the kill until then. */
  readonly during: number
  /** The longest time after the kill with no handler start in any process. */
  readonly longestGapMs: number
  /** From the kill until every message had run. */
  readonly allRunMs: number
  /** Handler starts beyond the first of each message (what a lost acknowledgement runs again). */
  readonly reruns: number
  /** Per-key order of the first runs: a message first run after a later one of its key. */
  readonly violations: number
  /** Reruns that started after a later message of their key had run. */
  readonly rerunsOutOfOrder: number
}

/**
 * 3 workers on streams at `replicas: 3`, `n` pre-published messages; once a quarter ran, `kill -9` of
 * the leader node of partition 0's stream, restarted 2 s later; waits until every message ran (not until the
 * stream is empty: acknowledgements lost with the node keep it from emptying until their ack wait).
 */
export async function nodeKillRun(
  cluster: NatsCluster,
  n: number,
  keys: number,
  partitions: number,
): Promise<NodeKill> {
  const config = {
    servers: cluster.urls,
    name: `bench-${process.pid}-node-kill`,
    partitions,
    workers: 8,
    ackWaitMs: 30_000,
    replicas: 3,
  }
  const prod = await producer(config)
  const workers = await spawnWorkers(3, config)
  try {
    await new Jobs(prod, keys).burst(n)
    // Joining takes seconds on a cluster (each partition's consumer is made at R3), and a loop runs
    // its partitions as soon as it holds them: watched from now on.
    const starting = startWorkers(workers)
    starting.catch(() => {}) // awaited below
    let node = ''
    for (const deadline = Date.now() + 10_000; node === ''; await pause(100)) {
      if (Date.now() > deadline) throw new BenchError(`node kill run: partition 0's stream has no leader`)
      node = await cluster.leaderOf(`${config.name}-work-0`)
    }
    // Killed once a quarter is acknowledged (gone from the work stream).
    for (let left = n, deadline = Date.now() + 60_000; left > (3 * n) / 4; await pause(20)) {
      if (Date.now() > deadline) throw new BenchError(`node kill run: ${n - left} of ${n} ran in 60 s`)
      left = (await prod.fill()).messages
    }
    cluster.kill9(cluster.names.indexOf(node))
    const killedAt = epochNow()
    await pause(2_000)
    await cluster.restart(cluster.names.indexOf(node))
    await starting
    let records: Records[] = []
    for (const deadline = Date.now() + 120_000; ; await pause(1_000)) {
      records = await reportsOf(workers)
      if (account(records).distinct === n) break
      if (Date.now() > deadline) throw new BenchError(`node kill run: ${account(records).distinct} of ${n} ran`)
    }
    const ranAtKill = new Set(records.flatMap((r) => r.seq.filter((_, i) => (r.start[i] as number) < killedAt))).size
    return { n, partitions, node, ranAtKill, ...timeline(records, killedAt), ...counts(records) }
  } finally {
    await Promise.all(workers.map((w) => w.stop()))
    await prod.stop().catch(() => {})
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function reportsOf(workers: readonly Worker[]): Promise<Records[]> {
  return (await Promise.all(workers.map((w) => w.ask({ type: 'report' }, 'report')))).map((r) => r.records)
}

// Reruns, and per-key order: of the first runs (must hold), and of every run (a rerun of a message
// whose acknowledgement was lost comes after later messages of its key ran).
function counts(records: readonly Records[]): Pick<NodeKill, 'reruns' | 'violations' | 'rerunsOutOfOrder'> {
  const a = account(records)
  const first = new Map<number, { ki: number; ks: number; start: number }>()
  for (const r of records) {
    for (let i = 0; i < r.seq.length; i++) {
      const seq = r.seq[i] as number
      const start = r.start[i] as number
      if (start < (first.get(seq)?.start ?? Number.POSITIVE_INFINITY)) {
        first.set(seq, { ki: r.ki[i] as number, ks: r.ks[i] as number, start })
      }
    }
  }
  let violations = 0
  const highest = new Map<number, number>()
  for (const f of [...first.values()].sort((x, y) => x.start - y.start)) {
    if (f.ks < (highest.get(f.ki) ?? -1)) violations++
    highest.set(f.ki, Math.max(f.ks, highest.get(f.ki) ?? -1))
  }
  return { reruns: a.starts - a.distinct, violations, rerunsOutOfOrder: a.violations - violations }
}

// Rates and gaps of the handler starts around the kill: the rate over the second before it, the longest
// pause with no start in any process after it, and the rate from the kill to the end of that pause.
function timeline(records: readonly Records[], killedAt: number) {
  const starts = Float64Array.from(records.flatMap((r) => r.start)).sort()
  const within = (from: number, to: number) => starts.filter((t) => t >= from && t < to).length
  const from = Math.max(killedAt - 1_000, starts[0] ?? killedAt)
  const before = within(from, killedAt) / ((killedAt - from) / 1000)
  let longestGapMs = 0
  let flowing = killedAt
  let previous = killedAt
  for (const t of starts) {
    if (t < killedAt) continue
    if (t - previous > longestGapMs) {
      longestGapMs = t - previous
      flowing = t
    }
    previous = t
  }
  const recoveredMs = flowing - killedAt
  const during = recoveredMs > 0 ? within(killedAt, flowing) / (recoveredMs / 1000) : before
  // Until the last message's first start (a rerun of a lost acknowledgement comes an ack wait later).
  const first = new Map<number, number>()
  for (const r of records) {
    for (let i = 0; i < r.seq.length; i++) {
      const seq = r.seq[i] as number
      first.set(seq, Math.min(first.get(seq) ?? Number.POSITIVE_INFINITY, r.start[i] as number))
    }
  }
  let lastFirst = killedAt
  for (const t of first.values()) lastFirst = Math.max(lastFirst, t)
  return { before, recoveredMs, during, longestGapMs, allRunMs: lastFirst - killedAt }
}
