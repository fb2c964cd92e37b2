/**
 * A worker process of the NATS suite and the cluster example: one `createNatsLoop` with the name the
 * parent gives, a no-op `job` handler that records when each message started (and ended) on the shared
 * epoch clock, and holds a `hold` message until told to let it go. Driven over IPC ({@link Command}).
 *
 * `node dist/nats/worker.js` (forked by the parent, never run by hand)
 */
import { createNatsLoop, type NatsLoop } from '@flowing/nats'
import { type Command, epochNow, type JobMessages, type Records, type Report, type WorkerConfig } from './protocol.js'

const records: Records = { ki: [], ks: [], seq: [], start: [], posted: [], end: [] }
// The index in `records` of each running message, by local id.
const running = new Map<string, number>()
const holds: (() => void)[] = []
let loop: NatsLoop<JobMessages> | undefined

function send(r: Report): void {
  process.send?.(r)
}

async function configure(config: WorkerConfig): Promise<void> {
  const l = await createNatsLoop<JobMessages>({
    servers: config.servers,
    name: config.name,
    partitions: config.partitions,
    workers: config.workers,
    ackWaitMs: config.ackWaitMs,
    replicas: config.replicas ?? 1,
    loop: { logger: false },
  })
  l.on('job', async (m) => {
    const at = epochNow()
    const p = m.payload
    running.set(m.id, records.start.length)
    records.ki.push(p.ki)
    records.ks.push(p.ks)
    records.seq.push(p.seq)
    records.start.push(at)
    records.posted.push(p.at)
    records.end.push(Number.NaN)
    const ms = config.handlerMs ?? 0
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    if (p.hold !== true) return
    if (config.verbose === true) console.log(`  [worker ${process.pid}] holding message #${p.seq} (key-${p.ki})`)
    send({ type: 'holding', pid: process.pid, seq: p.seq, at })
    await new Promise<void>((resolve) => holds.push(resolve))
  })
  l.events.on('succeeded', (m) => {
    const i = running.get(m.id)
    if (i === undefined) return
    running.delete(m.id)
    records.end[i] = epochNow()
  })
  loop = l
  if (config.verbose === true) {
    setInterval(() => send({ type: 'progress', pid: process.pid, ran: records.start.length }), 100).unref()
  }
  send({ type: 'ready', pid: process.pid })
}

function counters() {
  const m = loop?.metrics()
  return {
    received: m?.received ?? 0,
    acked: m?.acked ?? 0,
    nakked: m?.nakked ?? 0,
    redelivered: m?.redelivered ?? 0,
    fenced: m?.fenced ?? 0,
    leasesLost: m?.leasesLost ?? 0,
    cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
  }
}

async function handle(cmd: Command): Promise<void> {
  switch (cmd.type) {
    case 'config':
      return configure(cmd.config)
    case 'start':
      await loop?.start()
      return send({ type: 'started', at: epochNow() })
    case 'release':
      for (const release of holds.splice(0)) release()
      return
    case 'report':
      return send({ type: 'report', records, counters: counters() })
    case 'stop': {
      for (const release of holds.splice(0)) release()
      const report = await loop?.stop({ deadlineMs: 2_000 })
      send({ type: 'stopped', handedBack: report?.handedBack ?? 0 })
      process.disconnect()
    }
  }
}

process.on('message', (cmd: Command) => {
  handle(cmd).catch((error: unknown) => {
    send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) })
  })
})
process.on('disconnect', () => setTimeout(() => process.exit(0), 100).unref())
