/**
 * The job queue users would pick instead: BullMQ on the suite's private Redis, the same workload —
 * `Queue.addBulk` of each burst of 1,000 (its promise is the acknowledgement), a `Worker` with
 * concurrency 8 running a no-op async processor, finished jobs removed (`removeOnComplete`, as the
 * journal deletes finished rows). Checked like the Flowing rows: every job processed exactly once, the
 * queue empty at the end.
 *
 * BullMQ keeps no per-key order (groups are BullMQ Pro), and this Redis keeps nothing on disk.
 *
 * @module
 */
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { expectEqual, withDeadline } from '../lib/check.js'
import type { BatchedSample, SinglesSample } from './flowing-run.js'
import type { Server } from './servers.js'
import { type DurableWorkload, type OrderPaid, payment, Tally } from './workload.js'

const DEADLINE_MS = 600_000
let queues = 0

interface Session {
  readonly queue: Queue<OrderPaid>
  readonly tally: Tally
  /** Resolves once `n` jobs completed. */
  completed(n: number): Promise<void>
  /** Redis's `used_memory`, in bytes. */
  usedMemory(): Promise<number>
  /** Checks that the queue holds nothing, then closes the worker and the queue. */
  close(what: string, n: number): Promise<void>
}

async function open(redis: Server, w: DurableWorkload): Promise<Session> {
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
  const name = `durable-${++queues}`
  const queue = new Queue<OrderPaid>(name, {
    connection,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
  })
  const tally = new Tally(Math.max(w.n, w.singles))
  const worker = new Worker<OrderPaid>(name, async (job) => tally.ran(job.data.seq), {
    connection,
    concurrency: w.workers,
  })
  let done = 0
  let wanted = Number.POSITIVE_INFINITY
  let wake: (() => void) | undefined
  worker.on('completed', () => {
    if (++done >= wanted) wake?.()
  })
  const info = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true })
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady(), info.connect()])
  return {
    queue,
    tally,
    completed(n) {
      wanted = n
      const all = done >= n ? Promise.resolve() : new Promise<void>((resolve) => (wake = resolve))
      return withDeadline(all, DEADLINE_MS, () => `BullMQ: ${done} of ${n} jobs completed`)
    },
    async usedMemory() {
      const text = await info.info('memory')
      return Number(text.match(/used_memory:(\d+)/)?.[1] ?? 0)
    },
    async close(what, n) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed')
      const left = Object.values(counts).reduce((a, b) => a + b, 0)
      await worker.close()
      await queue.obliterate({ force: true })
      await queue.close()
      info.disconnect()
      expectEqual(`${what}: jobs left in Redis`, left, 0)
      tally.expectOnce(what, n)
    },
  }
}

/** The batched mode on BullMQ. */
export async function bullmqBatched(redis: Server, w: DurableWorkload): Promise<BatchedSample> {
  const s = await open(redis, w)
  const acks: number[] = []
  let peak = await s.usedMemory()
  const t0 = performance.now()
  for (let from = 0; from < w.n; from += w.burst) {
    const jobs = []
    const tb = performance.now()
    for (let seq = from; seq < Math.min(w.n, from + w.burst); seq++)
      jobs.push({ name: 'order.paid', data: payment(w, seq) })
    await s.queue.addBulk(jobs)
    acks.push(performance.now() - tb)
    if ((from / w.burst) % 20 === 19) peak = Math.max(peak, await s.usedMemory())
  }
  await s.completed(w.n)
  const seconds = (performance.now() - t0) / 1000
  const endBytes = await s.usedMemory()
  await s.close('BullMQ batched', w.n)
  return { msgsPerSec: w.n / seconds, seconds, acks, written: undefined, peakBytes: peak, endBytes }
}

/** The one-at-a-time mode on BullMQ: one `Queue.add`, awaited, at a time. */
export async function bullmqSingles(redis: Server, w: DurableWorkload): Promise<SinglesSample> {
  const s = await open(redis, w)
  const acks: number[] = []
  const t0 = performance.now()
  for (let seq = 0; seq < w.singles; seq++) {
    const tp = performance.now()
    await s.queue.add('order.paid', payment(w, seq))
    acks.push(performance.now() - tp)
  }
  const seconds = (performance.now() - t0) / 1000
  await s.completed(w.singles)
  await s.close('BullMQ one at a time', w.singles)
  return { acks, acksPerSec: w.singles / seconds, written: undefined }
}
