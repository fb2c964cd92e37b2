/**
 * The figures of the README: commit throughput by batch size (on a server with `fsync=on`, and with
 * `fsync=off` for comparison), four stores committing at once to one journal, and the time to open a
 * journal — empty, with 100k rows of one's own, and taking 100k rows over from a dead owner. A private
 * PostgreSQL server in the OS temp dir (the test harness's), removed after.
 *
 * ```text
 * npx tsx --conditions=@flowing/source packages/postgres/bench/measure.ts [--smoke]
 * ```
 *
 * Each section checks its own result (the rows committed and recovered) and exits 1 if one is off.
 */
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import type { JournalBatch, JournalRecord } from '@flowing/core'
import pg from 'pg'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { findPostgres, makeTemplate, PgServer } from '../test/server.js'

const smoke = process.argv.includes('--smoke')
const scale = smoke ? 0.05 : 1

/** A record the size of a typical one: a small JSON payload, a key (about 250 B of JSON). */
function record(id: string): JournalRecord {
  return {
    id,
    type: 'order.paid',
    payloadJson: `{"orderId":"${id}","amount":42.5,"currency":"EUR","customer":"c-1234"}`,
    key: 'c-1234',
    priority: 4,
    traceId: `t-${id}`,
    hops: 0,
    state: 'queued',
    attempts: [],
  }
}

function batch(parts: Partial<JournalBatch>): JournalBatch {
  return { messages: [], removed: [], deadLetters: [], deadLettersRemoved: [], keys: [], keysRemoved: [], ...parts }
}

const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')}/s`

function check(ok: boolean, what: string): void {
  if (ok) return
  console.error(`FAILED: ${what}`)
  process.exitCode = 1
}

/** Batch after batch, each journaling `size` records and removing the `size` of the batch before. */
async function steady(store: PostgresStore, tag: string, size: number, batches: number): Promise<number> {
  let previous: string[] = []
  const started = performance.now()
  for (let b = 0; b < batches; b++) {
    const messages = Array.from({ length: size }, (_, i) => record(`${tag}-${b}-${i}`))
    await store.commit(batch({ messages, removed: previous }))
    previous = messages.map((m) => m.id)
  }
  const ms = performance.now() - started
  await store.commit(batch({ removed: previous }))
  return ms
}

async function throughput(url: string, label: string): Promise<void> {
  const store = await postgresStore({ connectionString: url, journal: `throughput-${label}` })
  await steady(store, 'warm', 100, 10)
  for (const size of [10, 100, 1000]) {
    const batches = Math.max(5, Math.round((size === 10 ? 2000 : size === 100 ? 500 : 60) * scale))
    const ms = await steady(store, `s${size}`, size, batches)
    console.log(
      `  ${label}, batches of ${String(size).padStart(4)}: ${rate(size * batches, ms).padStart(9)} records (${(ms / batches).toFixed(2)} ms a batch)`,
    )
  }
  await store.close()
  const left = await postgresStore({ connectionString: url, journal: `throughput-${label}` })
  check(left.recovered().messages.length === 0, `${label}: every record was removed again`)
  await left.close()
}

async function shared(url: string): Promise<void> {
  const stores = await Promise.all(
    [0, 1, 2, 3].map((i) => postgresStore({ connectionString: url, journal: 'shared', owner: `p${i}` })),
  )
  const batches = Math.max(5, Math.round(200 * scale))
  const started = performance.now()
  await Promise.all(stores.map((s, i) => steady(s, `p${i}`, 100, batches)))
  const ms = performance.now() - started
  console.log(`  4 stores on one journal, batches of 100 each: ${rate(4 * 100 * batches, ms)} records together`)
  await Promise.all(stores.map((s) => s.close()))
}

async function opening(url: string, admin: pg.Pool): Promise<void> {
  const rows = Math.round(100_000 * scale)
  const writer = await postgresStore({ connectionString: url, journal: 'big', owner: 'writer' })
  for (let b = 0; b < rows / 1000; b++) {
    await writer.commit(batch({ messages: Array.from({ length: 1000 }, (_, i) => record(`r${b * 1000 + i}`)) }))
  }
  await writer.close()
  await admin.query('VACUUM ANALYZE flowing.messages')
  let started = performance.now()
  const empty = await postgresStore({ connectionString: url, journal: 'nothing' })
  console.log(`  open, empty journal (a new pool, one connection): ${Math.round(performance.now() - started)} ms`)
  await empty.close()
  // The writer closed: its rows have no lease, so the first store to open takes them over.
  started = performance.now()
  const heir = await postgresStore({ connectionString: url, journal: 'big', owner: 'heir' })
  const taken = heir.recovered().messages.length
  console.log(
    `  open, taking over ${rows.toLocaleString('en-US')} rows of a closed owner: ${Math.round(performance.now() - started)} ms`,
  )
  check(taken === rows, `the heir took over ${taken} of ${rows} rows`)
  await heir.close()
  started = performance.now()
  const again = await postgresStore({ connectionString: url, journal: 'big', owner: 'heir' })
  console.log(`  open, ${rows.toLocaleString('en-US')} rows of its own: ${Math.round(performance.now() - started)} ms`)
  check(again.recovered().messages[rows - 1]?.id === `r${rows - 1}`, 'the rows come back in order')
  await again.close()
}

const found = await findPostgres()
if ('reason' in found) {
  console.error(`no PostgreSQL to measure on: ${found.reason}`)
  process.exit(1)
}
const template = await makeTemplate(found)
const provided = { ok: true, postgres: found, template } as const
try {
  for (const fsync of [true, false]) {
    const server = await PgServer.start(provided, { fsync })
    try {
      const url = await server.createDatabase('bench')
      console.log(`PostgreSQL, fsync=${fsync ? 'on' : 'off'}:`)
      await throughput(url, `fsync=${fsync ? 'on' : 'off'}`)
      if (fsync) {
        await shared(url)
        const admin = new pg.Pool({ connectionString: url, max: 1 })
        await opening(url, admin)
        await admin.end()
      }
    } finally {
      await server.destroy()
    }
  }
} finally {
  rmSync(dirname(template), { recursive: true, force: true })
}
