/**
 * Commit-to-start latency: messages enqueued by an application transaction, each timed from its
 * COMMIT's return to its handler's start in a loop of the journal (one process: one clock). Two modes —
 * one at a time (the next transaction waits for the previous message to start: the latency alone), and
 * back to back (a transaction after another, as a busy application commits: notifications coalesce
 * and one takeover takes what several commits wrote).
 *
 * @module
 */
import { createLoop } from '@flowing/core'
import { createEnqueuer, type PostgresStore } from '@flowing/postgres'
import type pg from 'pg'
import { BenchError } from '../lib/check.js'

/** How the transactions are sent. */
export type LatencyMode = 'one at a time' | 'back to back'

/** The latencies of one mode, in ms. */
export interface LatencySample {
  readonly mode: LatencyMode
  readonly ms: number[]
  /** What the store took over (each message once). */
  readonly adopted: number
}

type Timed = { 'job.run': { readonly n: number } }

/**
 * Enqueues `count` messages from `client`, one transaction each, and times each from its COMMIT to
 * its start in a loop on `store`.
 * @throws BenchError when a message does not start exactly once
 */
export async function measureLatency(
  client: pg.Client,
  store: PostgresStore,
  mode: LatencyMode,
  count: number,
): Promise<LatencySample> {
  const enqueuer = createEnqueuer<Timed>({ journal: store.journal, types: ['job.run'] })
  const committedAt = new Array<number>(count)
  const startedAt = new Array<number>(count).fill(Number.NaN)
  let started = 0
  let waiter: (() => void) | undefined
  const loop = createLoop<Timed>({ store, logger: false })
  loop.on('job.run', (m) => {
    if (!Number.isNaN(startedAt[m.payload.n] as number)) throw new BenchError(`message ${m.payload.n} started twice`)
    startedAt[m.payload.n] = performance.now()
    started++
    waiter?.()
  })
  loop.start()
  const until = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new BenchError(`${n - started} of ${n} messages did not start`)), 30_000)
      waiter = () => {
        if (started < n) return
        clearTimeout(timer)
        resolve()
      }
      waiter()
    })
  for (let n = 0; n < count; n++) {
    await client.query('BEGIN')
    await enqueuer.enqueue(client, 'job.run', { n })
    await client.query('COMMIT')
    committedAt[n] = performance.now()
    if (mode === 'one at a time') await until(n + 1)
  }
  await until(count)
  await loop.stop()
  return { mode, ms: startedAt.map((s, n) => s - (committedAt[n] as number)), adopted: store.adopted }
}
