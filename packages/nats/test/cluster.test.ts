/**
 * A loop on a three-node JetStream cluster (test/cluster.ts), its streams and KV buckets at
 * `replicas: 3`, with one node killed (`kill -9`) under load and restarted two seconds later. Three
 * loops of one name in this process, each on a connection of its own to all three nodes, run keyed
 * messages — two thirds posted before they start, the rest while they run, across the kill — with the
 * docs' recipe for exactly-once effects: the effect is keyed by the message's idempotency key (a set
 * here, a unique key in a database) and `ctx.commit()` follows it, so a rerun that sees
 * `ctx.committed` skips it.
 *
 * Checked, for the kill of a follower of partition 0's stream and of its leader (the hard case: every
 * publish of the stream goes through it, and a new one must be elected; the other partitions' leaders
 * are spread over the nodes, so either kill takes some of them): every accepted post runs (a
 * post refused while the cluster elects is posted again under its idempotency key: stored once), per
 * key the first runs come in post order and two runs never overlap, every effect happens exactly once
 * and nothing is dead-lettered, the loops resume by themselves (every partition consumed by exactly
 * one of them again), and `drain()` resolves on empty work streams.
 *
 * What a cluster costs, allowed for here (see each constant): a ledger request that fails during an
 * election fails the attempt (retries outlast it); the session must outlast an election (the default
 * with `replicas` above 1); acknowledgements in flight when a consumer's leader dies are lost — the
 * server holds those
 * messages, and with them their partition once `maxAckPending` of them pile up, until the ack wait
 * hands them out again — so the ack wait is short and the bounds include it. Messages a crashed node
 * kept after their acknowledgement are handed out again by the owners' audits (removing them by a
 * consumer's ack floor lost messages: a new leader can count unacknowledged deliveries as acknowledged).
 */
import { DuplicateMessageError } from '@flowing/core'
import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop, PublishError } from '../src/index.js'
import { partitionOf } from '../src/internal/partition.js'
import { NODES, useNatsCluster } from './cluster.js'
import { describeNats } from './server.js'
import { until } from './until.js'

interface Messages {
  job: { k: number; s: number }
}

const LOOPS = 3
const N = 3000
const KEYS = 50
const PER_KEY = N / KEYS
const BEFORE = 2000 // posted before the loops start; the rest while they run, across the kill
const P = 8
const DOWN_MS = 2_000 // from the kill to the restart
// Lost acknowledgements (see above) come back after the ack wait: short, so the bounds can include it.
const ACK_WAIT_MS = 10_000
// Above nats-server's Raft election timeout (4–9 s in 2.9): the members bucket may have to elect a
// leader, and a process that cannot renew its key meanwhile must not drop its partitions (with the
// default 6 s every process drops all of them).
const SESSION_MS = 20_000
// The ledger's requests fail while its bucket elects a leader, and each failure is a failed attempt
// of the message: enough attempts, a second apart at most, to outlast an election.
const RETRY = { maxAttempts: 40, unknownMaxAttempts: 40, baseMs: 100, capMs: 1_000 }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describeNats('a 3-node cluster (R3): a node killed under load and restarted', () => {
  const cluster = useNatsCluster()
  const loops: NatsLoop<Messages>[] = []
  const connections: NatsConnection[] = []
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
    await Promise.all(connections.splice(0).map((nc) => nc.close()))
  })

  async function observer(): Promise<NatsConnection> {
    const nc = await cluster().connect()
    connections.push(nc)
    return nc
  }

  // Regression: the ledger's bucket was made at R1, on one node; killing that node stopped every keyed
  // message (each claim timed out) and dead-lettered them unrun.
  it('makes its streams and every KV bucket at `replicas: 3`', async () => {
    const name = 'r3-layout'
    loops.push(await createNatsLoop({ servers: cluster().urls, name, replicas: 3, onError: () => {} }))
    const jsm = await jetstreamManager(await observer())
    const replicas: Record<string, number> = {}
    const streams = ['work-0', 'work-31', 'delayed', 'dead', 'KV_members', 'KV_owners', 'KV_keys', 'KV_circuits']
    for (const stream of streams) {
      const full = stream.startsWith('KV_') ? `KV_${name}-${stream.slice(3)}` : `${name}-${stream}`
      replicas[stream] = (await jsm.streams.info(full)).config.num_replicas
    }
    expect(replicas).toEqual(Object.fromEntries(streams.map((s) => [s, 3])))
  })

  async function episode(victim: 'follower' | 'leader'): Promise<void> {
    const name = `r3-${victim}`
    const errors: unknown[] = []
    const nc = await observer()
    for (let i = 0; i < LOOPS; i++) {
      // One after the other: the first creates the streams and buckets, the others find them.
      const loop = await createNatsLoop<Messages>({
        servers: cluster().urls,
        name,
        partitions: P,
        replicas: 3,
        ackWaitMs: ACK_WAIT_MS,
        sessionMs: SESSION_MS,
        loop: { logger: false, retry: RETRY },
        onError: (error) => errors.push(error), // requests fail and time out while a node is away
      })
      loops.push(loop)
    }

    const firstRuns: number[][] = Array.from({ length: KEYS }, () => [])
    const ran = new Set<string>() // started at least once
    const done = new Set<string>() // ended at least once
    const effects = new Set<string>() // the keyed effect: applied at most once per id by construction
    const running = new Set<number>()
    const overlaps: string[] = []
    let runs = 0
    let resumed = 0 // a rerun that saw its commit: skipped the effect
    let refused = 0 // a rerun whose commit it did not see: the keyed effect was there already
    const dropped: string[] = [] // by the local loops (a duplicate idempotency key): acknowledged unrun
    for (const [i, loop] of loops.entries()) {
      loop.local.events.on('dropped', (m, reason) => dropped.push(`${m.payload.k}-${m.payload.s} in ${i} (${reason})`))
      loop.on('job', async (m, ctx) => {
        const { k, s } = m.payload
        const id = `${k}-${s}`
        runs++
        if (running.has(k)) overlaps.push(id)
        running.add(k)
        if (!ran.has(id)) firstRuns[k]?.push(s)
        ran.add(id)
        try {
          await new Promise((r) => setImmediate(r))
          if (ctx.committed !== undefined) resumed++
          else {
            if (effects.has(id)) refused++
            else effects.add(id)
            ctx.commit(true)
          }
        } finally {
          running.delete(k)
          done.add(id)
        }
      })
    }

    // Per key one post at a time, in order; a post refused (no stream leader during an election) is
    // posted again under its idempotency key: stored once, whichever attempt the server kept.
    let retried = 0
    let accepted = 0
    const post = async (k: number, s: number) => {
      const loop = loops[k % LOOPS] as NatsLoop<Messages>
      for (let attempt = 1; ; attempt++) {
        try {
          await loop.post('job', { k, s }, { key: `k${k}`, idempotencyKey: `${name}-${k}-${s}` })
          break
        } catch (error) {
          if (error instanceof DuplicateMessageError) break // an earlier attempt was stored
          if (!(error instanceof PublishError) || attempt === 300) throw error // 30 s of refusals
          retried++
          await sleep(100)
        }
      }
      accepted++
    }
    const postKey = async (k: number, from: number, to: number, paceMs: number) => {
      for (let s = from; s < to; s++) {
        await post(k, s)
        if (paceMs > 0) await sleep(paceMs)
      }
    }
    const keys = Array.from({ length: KEYS }, (_, k) => k)
    await Promise.all(keys.map((k) => postKey(k, 0, BEFORE / KEYS, 0)))

    const leader = cluster().indexOf(await cluster().leaderOf(nc, `${name}-work-0`))
    const node = victim === 'leader' ? leader : (leader + 1) % NODES
    const trace: string[] = []
    const t0 = Date.now()
    const note = (what: string) => {
      const m = loops.map((l) => l.metrics())
      trace.push(
        `+${Date.now() - t0} ms ${what}: ran ${ran.size}, done ${done.size}, accepted ${accepted}, ` +
          `held ${m.map((x) => x.held).join('/')}, partitions ${m.map((x) => x.partitions).join('/')}`,
      )
    }
    const progress = setInterval(() => note('progress'), 1_000)
    try {
      await Promise.all(loops.map((l) => l.start()))
      // The rest, one post per key every ~40 ms (~1000/s in all), while the loops run and across the kill.
      const later = Promise.all(keys.map((k) => postKey(k, BEFORE / KEYS, PER_KEY, 40)))
      await until(() => ran.size >= N / 3, 30_000, 'a third run')
      cluster().kill9(node)
      const killedAt = Date.now()
      note(`killed ${cluster().names[node]} (partition 0's leader: ${cluster().names[leader]})`)
      await sleep(DOWN_MS)
      await cluster().restart(node)
      note('restarted')
      await later
      expect(accepted).toBe(N)
      // Bounds: an election (≤ 9 s), a pull's expiry (5 s) and one ack wait (10 s), with margins.
      await until(() => done.size === N, 45_000, 'every accepted post run')
      const allRunMs = Date.now() - killedAt
      note('all run')
      for (const [k, s] of firstRuns.entries()) expect(s, `key ${k}: first runs`).toEqual([...s].sort((a, b) => a - b))
      expect(overlaps).toEqual([])
      expect(effects.size).toBe(N)
      await until(() => loops.every((l) => l.metrics().held === 0), 15_000, 'nothing held')
      // The loops went on by themselves: each partition is consumed by exactly one of them.
      await until(
        () => loops.reduce((sum, l) => sum + l.metrics().partitions, 0) === P,
        30_000,
        'every partition consumed by one loop',
      )
      const first = loops[0] as NatsLoop<Messages>
      // Messages a node kept after their acknowledgement are handed out again by the owners' audits (a
      // new consumer), never removed by a floor a new leader can get wrong: they end acknowledged.
      expect(await settles(first.drain(), ACK_WAIT_MS + 10_000)).toBe(true)
      expect((await first.fill()).messages).toBe(0)
      const m = loops.map((l) => l.metrics())
      expect(m.map((x) => x.deadLettered)).toEqual([0, 0, 0])
      console.log(
        `${victim} ${cluster().names[node]} killed: all ${N} run ${allRunMs} ms after the kill; ${runs} runs ` +
          `(reruns: ${resumed} saw their commit, ${refused} found their effect); ${retried} posts refused and retried; ` +
          `redelivered ${m.map((x) => x.redelivered).join('/')}, started over ${m.map((x) => x.startedOver).join('/')}, ` +
          `removedAcked ${m.map((x) => x.removedAcked).join('/')}; ${errors.length} errors reported`,
      )
    } catch (error) {
      note('failed')
      trace.push(`dropped: ${dropped.length} — ${dropped.slice(0, 40).join(', ')}`)
      throw new Error(`${(error as Error).message}\n${await diagnosis(nc, name, loops, trace, done, errors)}`, {
        cause: error,
      })
    } finally {
      clearInterval(progress)
    }
  }

  it('a follower of partition 0’s stream: every accepted post runs once, in key order, and it drains', async () => {
    await episode('follower')
  }, 150_000)

  it('the leader of partition 0’s stream: every accepted post runs once, in key order, and it drains', async () => {
    await episode('leader')
  }, 150_000)
})

// Whether `promise` settles within `ms` (it is left running otherwise).
async function settles(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([promise.then(() => true), timeout])
  } finally {
    clearTimeout(timer)
  }
}

// What a failed episode leaves behind: each partition consumer's state, what the stream still holds,
// the loops' counters, the errors they reported, and the progress lines.
async function diagnosis(
  nc: NatsConnection,
  name: string,
  loops: readonly NatsLoop<Messages>[],
  trace: readonly string[],
  done: ReadonlySet<string>,
  errors: readonly unknown[],
): Promise<string> {
  const lines: string[] = []
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5_000 })
    for (let p = 0; p < P; p++) {
      for await (const c of jsm.consumers.list(`${name}-work-${p}`)) {
        lines.push(
          `consumer ${c.name} (leader ${c.cluster?.leader}): delivered ${c.delivered.stream_seq}, ack floor ` +
            `${c.ack_floor.stream_seq}, ack pending ${c.num_ack_pending}, pending ${c.num_pending}`,
        )
      }
      const info = await jsm.streams.info(`${name}-work-${p}`)
      lines.push(`stream ${p}: ${info.state.messages} messages, ${info.state.first_seq}–${info.state.last_seq}`)
    }
  } catch (error) {
    lines.push(`(the servers did not answer: ${String(error)})`)
  }
  for (const [i, loop] of loops.entries()) {
    const { local, ...own } = loop.metrics()
    lines.push(`loop ${i}: ${JSON.stringify(own)}; local dropped ${local.counters.dropped}`)
  }
  lines.push(`partitions ${loops.map((l) => l.metrics().partitions).join('/')}; ${N - done.size} not run`)
  const notRun: string[] = []
  for (let k = 0; k < KEYS; k++) {
    for (let s = 0; s < PER_KEY; s++)
      if (!done.has(`${k}-${s}`)) notRun.push(`${k}-${s} (p${partitionOf(`k${k}`, '', P)})`)
  }
  lines.push(`not run: ${notRun.slice(0, 40).join(', ')}${notRun.length > 40 ? ', …' : ''}`)
  const counts = new Map<string, number>()
  for (const e of errors) counts.set(String(e), (counts.get(String(e)) ?? 0) + 1)
  lines.push(`errors: ${[...counts].map(([e, n]) => `${n} × ${e}`).join('; ') || 'none'}`)
  return [...lines, ...trace].join('\n')
}
