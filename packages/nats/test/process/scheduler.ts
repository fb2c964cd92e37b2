/**
 * One process of the schedule kill test (schedules-kill.test.ts): a NATS loop that upserts a schedule
 * firing every 300 ms and logs each fire it runs to the log file (a synchronous write survives a
 * kill -9), then runs until killed.
 *
 * argv[2]: JSON { url, name, log }
 */
import { appendFileSync } from 'node:fs'
import { createNatsLoop } from '../../src/index.js'

const { url, name, log } = JSON.parse(process.argv[2] as string) as { url: string; name: string; log: string }
const loop = await createNatsLoop<{ tick: null }>({
  servers: url,
  name,
  partitions: 4,
  ackWaitMs: 3_000,
  sessionMs: 3_000,
  loop: { logger: false },
})
loop.on('tick', (m) => {
  const at = Date.parse(m.headers['flowing-fire-at'] as string)
  appendFileSync(log, `${Date.now() >= at ? 'fire' : 'EARLY'} ${at} ${process.pid}\n`)
})
await loop.schedules.upsert('every-300', { every: 300 }, 'tick', null)
await loop.start()
appendFileSync(log, `ready ${process.pid}\n`)
