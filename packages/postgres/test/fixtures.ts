/**
 * What every Postgres test file shares: its own server and database, stores closed after each test,
 * and records and batches to write.
 */
import type { DeadLetter, JournalBatch, JournalRecord, KeyRecord } from '@flowing/core'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, inject } from 'vitest'
import { type PostgresStore, type PostgresStoreOptions, postgresStore } from '../src/index.js'
import { PgServer } from './server.js'

const provided = inject('postgres')

/** Why the suites skip on this machine, if they do. */
export const skipReason = provided.ok ? undefined : provided.reason
if (skipReason !== undefined) console.warn(`@flowing/postgres: the PostgreSQL tests are skipped — ${skipReason}`)

/** `describe`, skipped (with the console line above) where there is no PostgreSQL. */
export const describePostgres = describe.skipIf(skipReason !== undefined)

/** The file's server and database, started in `beforeAll` and removed in `afterAll`. */
export interface Database {
  readonly server: PgServer
  /** The file's database. */
  readonly url: string
  /** An admin pool on it, for inspecting the tables. */
  readonly admin: pg.Pool
  /** Opens a store on the file's database (closed after the test), with a journal of the test's own. */
  open(options?: PostgresStoreOptions): Promise<PostgresStore>
  /** A journal name not used before in this file. */
  journal(): string
}

/** Starts the file's server in `beforeAll`; call it inside a `describePostgres` callback. */
export function useDatabase(options: { fsync?: boolean } = {}): Database {
  let server: PgServer | undefined
  let admin: pg.Pool | undefined
  let url = ''
  let journals = 0
  let current = 'j0'
  const opened: PostgresStore[] = []
  beforeAll(async () => {
    if (!provided.ok) return
    server = await PgServer.start(provided, options)
    url = await server.createDatabase('flowing_test')
    admin = new pg.Pool({ connectionString: url, max: 4 })
    admin.on('error', () => {})
  }, 60_000)
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((s) => s.close()))
    current = `j${++journals}`
  })
  afterAll(async () => {
    await admin?.end()
    await server?.destroy()
  }, 60_000)
  return {
    get server() {
      if (server === undefined) throw new Error('no server (beforeAll has not run)')
      return server
    },
    get url() {
      return url
    },
    get admin() {
      if (admin === undefined) throw new Error('no server (beforeAll has not run)')
      return admin
    },
    async open(extra: PostgresStoreOptions = {}) {
      const where = extra.pool === undefined ? { connectionString: url } : {}
      const store = await postgresStore({ ...where, journal: current, ...extra })
      opened.push(store)
      return store
    },
    journal: () => current,
  }
}

/** A journal record with `id` (and `extra` fields). */
export function record(id: string, extra: Partial<JournalRecord> = {}): JournalRecord {
  return {
    id,
    type: 'order.paid',
    payloadJson: JSON.stringify({ id, amount: 12.5 }),
    priority: 0,
    traceId: `t-${id}`,
    hops: 0,
    state: 'queued',
    attempts: [],
    ...extra,
  } as JournalRecord
}

/** A dead letter with `id`. */
export function letter(id: string, atEpochMs = 1_700_000_000_000): DeadLetter {
  return {
    id,
    type: 'order.paid',
    payload: { id },
    key: undefined,
    priority: 0,
    routeKey: undefined,
    traceId: `t-${id}`,
    reason: 'exhausted',
    errorClass: 'retryable',
    error: { name: 'Error', message: 'boom' },
    attempts: [],
    at: 1,
    atEpochMs,
  } as unknown as DeadLetter
}

/** A finished key. */
export function key(k: string, expiresAtEpochMs: number): KeyRecord {
  return { key: k, entry: { state: 'done' }, expiresAtEpochMs }
}

/** A batch with only the given parts. */
export function batch(parts: Partial<JournalBatch>): JournalBatch {
  return { messages: [], removed: [], deadLetters: [], deadLettersRemoved: [], keys: [], keysRemoved: [], ...parts }
}

/** Ids of records, in order. */
export function ids(records: readonly { readonly id: string }[]): string[] {
  return records.map((r) => r.id)
}

/** Polls `check` every 20 ms until it returns a value other than undefined (real time: a server's clock). */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Ends `owner`'s lease now, as if its process had stopped renewing it a lease ago. */
export async function expireLease(admin: pg.Pool, journal: string, owner: string): Promise<void> {
  const result = await admin.query(
    "UPDATE flowing.leases SET expires_at = now() - interval '1 millisecond' WHERE journal = $1 AND owner = $2",
    [journal, owner],
  )
  if (result.rowCount !== 1) throw new Error(`no lease of ${owner} in ${journal}`)
}

/** Owners of the journal's message rows, by id. */
export async function owners(admin: pg.Pool, journal: string): Promise<Record<string, string>> {
  const result = await admin.query<{ id: string; owner: string }>(
    'SELECT id, owner FROM flowing.messages WHERE journal = $1 ORDER BY seq',
    [journal],
  )
  return Object.fromEntries(result.rows.map((r) => [r.id, r.owner]))
}
