/**
 * The cluster example (`pnpm start:cluster`): one Flowing loop run by 3 worker processes on NATS
 * JetStream. It starts a private nats-server, forks 3 workers that share the loop's name (and so its
 * partitions), posts a few thousand keyed messages, prints what each process ran and checks per-key
 * order across them; then `kill -9`s a worker in the middle of a second wave while it holds a message,
 * shows the server hand that message (and whatever else the dead process held) to another process
 * after `ackWaitMs`, starts a replacement, and closes with a summary. Without a nats-server binary it
 * says how to get one and exits 0.
 */
import { orderCheck } from '../nats/analysis.js'
import { emptied, Jobs, producer, spawnWorkers, startWorkers, type Worker } from '../nats/cluster.js'
import { epochNow, type Records, type WorkerConfig } from '../nats/protocol.js'
import { INSTALL_HINT, startNats } from '../nats/server.js'
import { killAndRecover } from './episode.js'

const FIRST_WAVE = 3_000
const SECOND_WAVE = 2_000
const KEYS = 300
const n = (x: number) => x.toLocaleString('en-US')
const ok = (b: boolean) => (b ? '✔' : '✘')

/** The records of each worker, and their per-key order over all of them. */
export async function reportOf(workers: readonly Worker[]): Promise<{ records: Records[]; violations: number }> {
  const reports = await Promise.all(workers.map((w) => w.ask({ type: 'report' }, 'report')))
  const records = reports.map((r) => r.records)
  return { records, violations: orderCheck(records).violations }
}

async function firstWave(config: WorkerConfig, jobs: Jobs, workers: readonly Worker[]): Promise<number> {
  console.log(`1. ${n(FIRST_WAVE)} messages over ${KEYS} keys, published while the 3 workers run`)
  const t0 = epochNow()
  await jobs.burst(FIRST_WAVE)
  await emptied(jobs.loop, 60_000)
  const seconds = (epochNow() - t0) / 1000
  const { records, violations } = await reportOf(workers)
  for (const [i, r] of records.entries()) {
    console.log(`   worker ${i + 1} (pid ${workers[i]?.pid}): ran ${n(r.start.length)} messages`)
  }
  const total = records.reduce((sum, r) => sum + r.start.length, 0)
  console.log(
    `   ${n(total)} runs for ${n(FIRST_WAVE)} messages in ${seconds.toFixed(2)} s (${n(Math.round(FIRST_WAVE / seconds))} msgs/s), P=${config.partitions}`,
  )
  console.log(`   per-key order across the 3 processes: ${violations} violations ${ok(violations === 0)}\n`)
  return violations
}

async function main(): Promise<void> {
  const nats = await startNats()
  if (!nats.ok) {
    console.log(
      `Flowing cluster example — skipped: ${nats.reason}.\nInstall a nats-server and run it again:\n${INSTALL_HINT}`,
    )
    return
  }
  const started = performance.now()
  const config: WorkerConfig = {
    servers: nats.server.url,
    name: 'cluster-example',
    partitions: 16,
    workers: 8,
    ackWaitMs: 2_000,
    verbose: true,
  }
  const workers: Worker[] = []
  const prod = await producer(config)
  try {
    console.log(`Flowing cluster example — ${nats.server.description} on ${nats.server.url}`)
    console.log(
      `loop '${config.name}': P=${config.partitions} partitions, ackWaitMs ${config.ackWaitMs}, 3 worker processes\n`,
    )
    workers.push(...(await spawnWorkers(3, config, true)))
    await startWorkers(workers)
    const jobs = new Jobs(prod, KEYS)
    const first = await firstWave(config, jobs, workers)
    const second = await killAndRecover({ config, jobs, workers, wave: SECOND_WAVE })
    const seconds = (performance.now() - started) / 1000
    console.log(`Summary (${seconds.toFixed(1)} s):`)
    console.log(
      `   ${n(FIRST_WAVE + SECOND_WAVE + 1)} messages posted, every one run to its end, the work stream empty ${ok(true)}`,
    )
    console.log(`   per-key order kept across processes in both waves ${ok(first + second.violations === 0)}`)
    console.log(
      `   kill -9 of a worker: its held message ran in another process ${second.redeliveryMs.toFixed(0)} ms after the kill (ackWaitMs ${config.ackWaitMs}) ${ok(second.redeliveryMs < config.ackWaitMs + 1_000)}; ${n(second.redelivered)} deliveries redelivered in all`,
    )
    if (first + second.violations > 0) process.exitCode = 1
  } finally {
    await Promise.all(workers.map((w) => w.stop()))
    await prod.stop()
    await nats.server.stop()
  }
}

await main()
