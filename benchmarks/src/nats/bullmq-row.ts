/**
 * The peer on the same workload: BullMQ on a private Redis (the durable suite's), its jobs added up
 * front (`addBulk` in chunks of 1,000), one `Worker` with as many workers' concurrency, a no-op
 * processor (or one that awaits a timer), finished jobs removed. Timed from the worker's start to the last completion; the CPU is
 * this process's (the worker's and the Redis client's), Redis's own is not counted. BullMQ keeps no
 * per-key order (groups are BullMQ Pro), so it does less than the NatsLoop rows.
 *
 * @module
 */
import { Queue, Worker } from 'bullmq'
import { startRedis } from '../durable/servers.js'
import { withDeadline } from '../lib/check.js'

/** One BullMQ run: msgs/s and this process's CPU per job (µs). */
export interface BullmqSample {
  /** How long each job's processor took (ms; 0: a no-op). */
  readonly handlerMs: number
  readonly msgsPerSec: number
  readonly cpuUsPerMsg: number
  readonly redis: string
}

/**
 * Runs `n` jobs through BullMQ, each processor awaiting a `handlerMs` timer (0: a no-op); the reason
 * instead when no Redis can be started.
 */
export async function bullmqRun(n: number, concurrency: number, handlerMs = 0): Promise<BullmqSample | string> {
  const started = await startRedis()
  if (!started.ok) return started.reason
  const redis = started.server
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
  const queue = new Queue<{ i: number }>('nats-peer', {
    connection,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
  })
  try {
    for (let i = 0; i < n; i += 1_000) {
      const chunk = Array.from({ length: Math.min(1_000, n - i) }, (_, k) => ({ name: 'job', data: { i: i + k } }))
      await queue.addBulk(chunk)
    }
    let done = 0
    let finish = () => {}
    const all = new Promise<void>((resolve) => (finish = resolve))
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const processor = async () => {
      if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs))
    }
    const worker = new Worker<{ i: number }>('nats-peer', processor, { connection, concurrency })
    worker.on('completed', () => {
      if (++done === n) finish()
    })
    await withDeadline(all, 300_000, () => `BullMQ: ${done} of ${n} jobs completed`)
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    await worker.close()
    const cpuUsPerMsg = (cpu.user + cpu.system) / n
    return { handlerMs, msgsPerSec: (n / ms) * 1000, cpuUsPerMsg, redis: redis.description }
  } finally {
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
    await redis.stop()
  }
}
