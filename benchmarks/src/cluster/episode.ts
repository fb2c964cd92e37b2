/**
 * The cluster example's kill/recover episode: a second wave is published with one message whose
 * handler holds; the worker that starts it is killed with `kill -9` at once, a replacement is forked,
 * and the server hands the held message — and whatever else the dead process held — to the others
 * after `ackWaitMs`.
 *
 * @module
 */
import { orderCheck } from '../nats/analysis.js'
import { emptied, type Jobs, spawnWorkers, startWorkers, type Worker } from '../nats/cluster.js'
import { epochNow, type WorkerConfig } from '../nats/protocol.js'

/** What the episode showed. */
export interface Recovery {
  readonly redeliveryMs: number
  readonly redelivered: number
  readonly violations: number
}

const n = (x: number) => x.toLocaleString('en-US')

function nextHolding(workers: readonly Worker[], except?: number): Promise<{ worker: Worker; at: number }> {
  return new Promise((resolve) => {
    let done = false
    for (const worker of workers) {
      if (worker.pid === except) continue
      worker.on((r) => {
        if (done) return true
        if (r.type !== 'holding') return false
        done = true
        resolve({ worker, at: r.at })
        return true
      })
    }
  })
}

function lastProgress(worker: Worker): () => number {
  let ran = 0
  worker.on((r) => {
    if (r.type === 'progress') ran = r.ran
    return false
  })
  return () => ran
}

/** Runs the episode on `workers` (the killed one is replaced in the array). */
export async function killAndRecover(o: {
  config: WorkerConfig
  jobs: Jobs
  workers: Worker[]
  wave: number
}): Promise<Recovery> {
  const { config, jobs, workers } = o
  console.log(`2. a second wave of ${n(o.wave)} messages, one of them held by its handler; kill -9 whoever holds it`)
  const progress = workers.map(lastProgress)
  const holding = nextHolding(workers)
  const published = jobs.burst(o.wave / 2).then(() => jobs.post(true))
  const holder = await holding
  const index = workers.indexOf(holder.worker)
  const ranBefore = progress[index]?.() ?? 0
  const again = nextHolding(workers, holder.worker.pid)
  holder.worker.kill9()
  const killedAt = epochNow()
  console.log(`   kill -9 worker ${index + 1} (pid ${holder.worker.pid}), ~${n(ranBefore)} runs in all before it died`)
  const [replacement] = await spawnWorkers(1, config, true)
  if (replacement === undefined) throw new Error('no replacement worker')
  workers[index] = replacement
  await startWorkers([replacement])
  console.log(
    `   replacement worker started (pid ${replacement.pid}) ${((epochNow() - killedAt) / 1000).toFixed(2)} s after the kill`,
  )
  await published
  await jobs.burst(o.wave / 2)
  const other = await again
  const redeliveryMs = other.at - killedAt
  console.log(
    `   the held message started again in pid ${other.worker.pid} ${redeliveryMs.toFixed(0)} ms after the kill (ackWaitMs ${config.ackWaitMs}): the server redelivered it`,
  )
  other.worker.send({ type: 'release' })
  await emptied(jobs.loop, 60_000)
  const reports = await Promise.all(workers.map((w) => w.ask({ type: 'report' }, 'report')))
  for (const [i, r] of reports.entries()) {
    const label = i === index ? `worker ${i + 1}' (the replacement)` : `worker ${i + 1}`
    console.log(
      `   ${label} (pid ${workers[i]?.pid}): ran ${n(r.records.start.length)} in all, ${n(r.counters.redelivered)} of them redeliveries`,
    )
  }
  const redelivered = reports.reduce((sum, r) => sum + r.counters.redelivered, 0)
  const violations = orderCheck(reports.map((r) => r.records)).violations
  console.log(
    `   every message of the second wave ran; per-key order among the live processes: ${violations} violations\n`,
  )
  return { redeliveryMs, redelivered, violations }
}
