/**
 * A process holding a store, for the tests that freeze or kill one for real. Run as
 * `node --conditions=@flowing/source --import tsx child.ts '<json config>'`.
 *
 * - `hold`: opens, commits `rows`, prints `ready <token>`, then for each stdin line `commit <id>`
 *   commits that record (removing the first of `rows`) and prints `committed <id>` or
 *   `refused <operation> <message>`.
 * - `batches`: opens, then commits batch after batch — batch n puts ten records `b<n>-<i>` and replaces
 *   the record `last` with `{ n }` — printing `committed <n>` once each resolves, until it is killed.
 */
import { createInterface } from 'node:readline'
import type { JournalBatch, JournalRecord, StoreError } from '@flowing/core'
import { postgresStore } from '../src/index.js'

interface Config {
  readonly mode: 'hold' | 'batches'
  readonly url: string
  readonly journal: string
  readonly owner: string
  readonly leaseMs?: number
  readonly renewEveryMs?: number
  readonly rows?: readonly string[]
}

const config = JSON.parse(process.argv[2] ?? '{}') as Config
const empty: JournalBatch = {
  messages: [],
  removed: [],
  deadLetters: [],
  deadLettersRemoved: [],
  keys: [],
  keysRemoved: [],
}

function record(id: string, payload: unknown = { id }): JournalRecord {
  const base = { id, type: 'test', priority: 0, traceId: id, hops: 0, state: 'queued', attempts: [] } as const
  return { ...base, payloadJson: JSON.stringify(payload) }
}

const store = await postgresStore({
  connectionString: config.url,
  journal: config.journal,
  owner: config.owner,
  leaseMs: config.leaseMs,
  renewEveryMs: config.renewEveryMs,
})

if (config.mode === 'hold') {
  const rows = config.rows ?? []
  await store.commit({ ...empty, messages: rows.map((id) => record(id)) })
  console.log(`ready ${store.lease.token}`)
  for await (const line of createInterface({ input: process.stdin })) {
    const id = line.replace(/^commit /, '')
    try {
      await store.commit({ ...empty, messages: [record(id)], removed: rows.slice(0, 1) })
      console.log(`committed ${id}`)
    } catch (error) {
      const e = error as StoreError
      console.log(`refused ${e.operation} ${e.message}`)
    }
  }
} else {
  for (let n = 0; ; n++) {
    const messages = Array.from({ length: 10 }, (_, i) => record(`b${n}-${i}`, { n, i }))
    await store.commit({ ...empty, messages: [...messages, record('last', { n })] })
    console.log(`committed ${n}`)
  }
}
