/**
 * `node dist/shutdown.js [--smoke]`: what graceful shutdown and idempotency cost — how long a stop with
 * a deadline takes to hand a backlog back, how big the snapshot is per message, how fast it restores,
 * how late a deadline cut-off resolves under load, and what an idempotency key adds to a post (against
 * a plain post and a hand-rolled `Set` check in the same run). Fails (exit 1) when a count does not add
 * up — never on speed.
 */

import { writeFileSync } from 'node:fs'
import { createLoop, type LoopSnapshot } from '@flowing/core'
import { expectEqual } from './lib/check.js'
import { codeRevision, describeMachine, formatMachine } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount, formatRatio, median } from './lib/stats.js'
import { renderTable } from './lib/table.js'

const RESULTS = new URL('../RESULTS-shutdown.md', import.meta.url)
const USAGE = 'usage: node dist/shutdown.js [--smoke]'

interface Orders {
  'order.paid': { orderId: string; amount: number }
}

const payload = (i: number) => ({ orderId: `o-${i}`, amount: (i * 7) % 500 })
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface BacklogSample {
  readonly stopMs: number
  readonly bytesPerMessage: number
  readonly restoreMs: number
}

/** A backlog of `n` waiting messages (a third keyed, a third delayed) handed back by stop({ deadlineMs: 0 }), then restored. */
async function backlog(n: number): Promise<BacklogSample> {
  const loop = createLoop<Orders>({ capacity: n, autoStart: false, logger: false })
  loop.on('order.paid', () => {})
  for (let i = 0; i < n; i++) {
    if (i % 3 === 2) loop.postDelayed('order.paid', payload(i), 60_000, { key: `c-${i % 1000}` })
    else loop.post('order.paid', payload(i), i % 3 === 1 ? { key: `c-${i % 1000}`, idempotencyKey: `pay-${i}` } : {})
  }
  const t0 = performance.now()
  const snapshot = await loop.stop({ deadlineMs: 0 })
  const t1 = performance.now()
  expectEqual('stop: messages handed back', snapshot.messages.length, n)
  const json = JSON.stringify(snapshot)
  const parsed = JSON.parse(json) as LoopSnapshot
  const fresh = createLoop<Orders>({ capacity: n, autoStart: false, logger: false })
  fresh.on('order.paid', () => {})
  const t2 = performance.now()
  const restored = fresh.restore(parsed)
  const t3 = performance.now()
  expectEqual('restore: messages re-admitted', restored, n)
  const c = fresh.metrics().counters
  expectEqual('restore: accepted', c.accepted, n)
  await fresh.stop({ deadlineMs: 0 })
  return { stopMs: t1 - t0, bytesPerMessage: Buffer.byteLength(json) / n, restoreMs: t3 - t2 }
}

/** 8 workers on 20 ms handlers with a deep backlog: how late after its deadline does stop() resolve? */
async function cutOffLateness(deadlineMs: number): Promise<{ lateMs: number; handedBack: number; done: number }> {
  const loop = createLoop<Orders>({ workers: 8, capacity: 50_000, logger: false })
  let done = 0
  loop.on('order.paid', async (_m, ctx) => {
    await sleep(20)
    if (!ctx.signal.aborted) done++
  })
  for (let i = 0; i < 20_000; i++) loop.post('order.paid', payload(i), { key: `c-${i % 500}` })
  await sleep(50)
  const t0 = performance.now()
  const snapshot = await loop.stop({ deadlineMs })
  const late = performance.now() - t0 - deadlineMs
  const c = loop.metrics().counters
  expectEqual('cut-off: I1 at rest', c.accepted, c.succeeded + c.snapshotted)
  expectEqual('cut-off: snapshot size', snapshot.messages.length, c.snapshotted)
  return { lateMs: late, handedBack: snapshot.messages.length, done }
}

type PostCase = 'plain' | 'key' | 'set' | 'duplicate'

/** ns per post: plain, with an idempotency key, plain plus a hand-rolled Set check, and a refused duplicate. */
function posts(kind: PostCase, n: number): number {
  const loop = createLoop<Orders>({ capacity: n, autoStart: false, logger: false })
  loop.on('order.paid', () => {})
  const keys = Array.from({ length: n }, (_, i) => `pay-${i}`)
  const seen = new Set<string>()
  if (kind === 'duplicate') loop.post('order.paid', payload(0), { idempotencyKey: 'pay-0' })
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    if (kind === 'plain') loop.post('order.paid', payload(i))
    else if (kind === 'key') loop.post('order.paid', payload(i), { idempotencyKey: keys[i] as string })
    else if (kind === 'set') {
      const key = keys[i] as string
      if (!seen.has(key)) {
        seen.add(key)
        loop.post('order.paid', payload(i))
      }
    } else loop.tryPost('order.paid', payload(i), { idempotencyKey: 'pay-0' })
  }
  const t1 = performance.now()
  const c = loop.metrics().counters
  expectEqual(`${kind}: accepted`, c.accepted, kind === 'duplicate' ? 1 : n)
  return ((t1 - t0) * 1e6) / n
}

async function main(args: string[]): Promise<void> {
  const smoke = args.includes('--smoke')
  const n = smoke ? 5_000 : 100_000
  const rounds = smoke ? 1 : 5
  await backlog(Math.min(n, 10_000)) // warm-up
  const samples: BacklogSample[] = []
  for (let r = 0; r < rounds; r++) samples.push(await backlog(n))
  const stopMs = median(samples.map((s) => s.stopMs))
  const restoreMs = median(samples.map((s) => s.restoreMs))
  const bytes = median(samples.map((s) => s.bytesPerMessage))
  const backlogTable = renderTable(
    [
      { header: `backlog of ${formatCount(n)}`, align: 'left' },
      { header: 'total', align: 'right' },
      { header: 'per message', align: 'right' },
    ],
    [
      ['stop({ deadlineMs: 0 }) → snapshot', `${stopMs.toFixed(1)} ms`, `${((stopMs * 1e6) / n).toFixed(0)} ns`],
      ['snapshot as JSON', `${((bytes * n) / 1e6).toFixed(1)} MB`, `${bytes.toFixed(0)} B`],
      ['restore() (checks + re-admission)', `${restoreMs.toFixed(1)} ms`, `${((restoreMs * 1e6) / n).toFixed(0)} ns`],
    ],
  )
  const deadlines = smoke ? [50] : [50, 200, 1000]
  const cut: { deadline: number; lateMs: number; handedBack: number; done: number }[] = []
  for (const deadline of deadlines) cut.push({ deadline, ...(await cutOffLateness(deadline)) })
  const cutTable = renderTable(
    [
      { header: 'deadlineMs (8 workers, 20 ms handlers, 20k backlog)', align: 'left' },
      { header: 'resolved after the deadline', align: 'right' },
      { header: 'finished', align: 'right' },
      { header: 'handed back', align: 'right' },
    ],
    cut.map((c) => [String(c.deadline), `+${c.lateMs.toFixed(1)} ms`, String(c.done), String(c.handedBack)]),
  )
  const postN = smoke ? 20_000 : 200_000
  const kinds: PostCase[] = ['plain', 'set', 'key', 'duplicate']
  for (const k of kinds) posts(k, Math.min(postN, 20_000)) // warm-up
  const postNs = new Map<PostCase, number[]>(kinds.map((k) => [k, []]))
  for (let r = 0; r < rounds; r++) for (const k of kinds) postNs.get(k)?.push(posts(k, postN))
  const plain = median(postNs.get('plain') ?? [])
  const postTable = renderTable(
    [
      { header: `post (${formatCount(postN)} per round)`, align: 'left' },
      { header: 'ns / post', align: 'right' },
      { header: '× plain post', align: 'right' },
    ],
    (
      [
        ['plain', 'post(), no key'],
        ['set', 'post() behind a hand-rolled Set check'],
        ['key', 'post({ idempotencyKey }) — ledger claim'],
        ['duplicate', 'tryPost({ idempotencyKey }) refused as duplicate'],
      ] as const
    ).map(([k, name]) => {
      const ns = median(postNs.get(k) ?? [])
      return [name, ns.toFixed(0), formatRatio(ns / plain)]
    }),
  )
  console.log(`Shutdown, restore and idempotency (median of ${rounds})\n`)
  console.log(`${backlogTable}\n\n${cutTable}\n\n${postTable}`)
  if (!smoke) {
    writeFileSync(
      RESULTS,
      [
        '# Benchmark results — shutdown, restore, idempotency',
        '',
        'Generated by `npx -y pnpm@12.4.2 --filter @flowing/benchmarks bench:shutdown` after `npx tsc -b` (runs `node dist/shutdown.js`).',
        `Median of ${rounds} rounds after a warm-up. The other suites: [RESULTS.md](./RESULTS.md).`,
        '',
        `- **Code:** ${codeRevision()}`,
        `- **Machine:** ${formatMachine(describeMachine())}`,
        `- **Date:** ${new Date().toISOString()}`,
        '',
        '## Handing a backlog back and restoring it',
        '',
        'A paused loop holding the backlog: a third plain, a third keyed with an idempotency key, a third',
        'delayed by 60 s. Payload `{ orderId, amount }`. The snapshot goes through `JSON.stringify` /',
        '`JSON.parse` before `restore()` into a fresh loop; every message is checked to come back.',
        '',
        backlogTable,
        '',
        '## Deadline cut-off under load',
        '',
        'Real clock: how long after its deadline `stop({ deadlineMs })` resolves with the snapshot (what is',
        'left is handed back, running handlers are aborted); I1 is checked (`accepted = succeeded + snapshotted`).',
        '',
        cutTable,
        '',
        '## What an idempotency key costs a post',
        '',
        'Paused loop (nothing runs), a fresh key per post; the duplicate row posts one key over and over.',
        '',
        postTable,
        '',
      ].join('\n'),
    )
    console.log(`\nWrote ${RESULTS.pathname}`)
  }
}

runSuite('shutdown', USAGE, main)
