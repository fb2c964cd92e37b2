/**
 * A process for the enqueue tests that kill one for real. Run as
 * `node --conditions=@flowing/source --import tsx enqueue-child.ts '<json config>'`.
 *
 * - `enqueue`: enqueues `count` emails (`n` from 0) in one transaction, commits, prints `committed`
 *   and kills itself with SIGKILL at once (before any clean-up, before its client is ended).
 * - `adopt`: opens a store (`owner`, `leaseMs`, `renewEveryMs`) and a paused loop on it — nothing
 *   starts — and prints `listening`, then `adopted <n>` as its store takes enqueued messages over.
 */
import { createLoop } from '@flowing/core'
import pg from 'pg'
import { createEnqueuer, postgresStore } from '../src/index.js'

interface Config {
  readonly mode: 'enqueue' | 'adopt'
  readonly url: string
  readonly journal: string
  readonly count?: number
  readonly owner?: string
  readonly leaseMs?: number
  readonly renewEveryMs?: number
}

type Mail = { email: { to: string; n: number } }
const config = JSON.parse(process.argv[2] ?? '{}') as Config

if (config.mode === 'enqueue') {
  const client = new pg.Client({ connectionString: config.url })
  await client.connect()
  const enqueuer = createEnqueuer<Mail>({ journal: config.journal, types: ['email'] })
  await client.query('BEGIN')
  for (let n = 0; n < (config.count ?? 1); n++) await enqueuer.enqueue(client, 'email', { to: 'x', n })
  await client.query('COMMIT')
  console.log('committed')
  process.kill(process.pid, 'SIGKILL')
} else {
  const { url: connectionString, journal, owner, leaseMs, renewEveryMs } = config
  const store = await postgresStore({ connectionString, journal, owner, leaseMs, renewEveryMs })
  const loop = createLoop<Mail>({ store, logger: false })
  loop.on('email', () => {
    console.log('ran') // never: the loop is paused
  })
  loop.start()
  loop.pause()
  console.log(store.listening ? 'listening' : 'not listening')
  let told = 0
  setInterval(() => {
    if (store.adopted === told) return
    told = store.adopted
    console.log(`adopted ${told}`)
  }, 5)
}
