/**
 * Opening a store: the pool, the schema, the lease, the takeover of dead owners' rows, and everything
 * the store then holds read back — before the factory resolves, so `recovered()` is synchronous.
 *
 * @module
 */
import type { DeadLetter, JournalRecord, KeyRecord, StoreContents } from '@flowing/core'
import pg from 'pg'
import type { ResolvedPostgresOptions } from '../options.js'
import { type Queryable, run } from './db.js'
import { storeFailure } from './failure.js'
import { Lease } from './lease.js'
import { ensureSchema } from './schema.js'
import { type Statements, statements } from './sql.js'
import { lockKey, takeOver } from './takeover.js'

/** An open store's parts. */
export interface Opened {
  readonly name: string
  readonly pool: pg.Pool
  /** Whether the store created the pool (and so ends it at close). */
  readonly ownsPool: boolean
  readonly sql: Statements
  readonly lease: Lease
  readonly lockKey: string
  readonly contents: StoreContents
}

// A pool of our own: few connections (one commit at a time, one tick, the reads at open), a bounded
// wait for a connection, keep-alives so a silent network drop is noticed, and idle connections that do
// not keep the process alive (a script that forgets close() still exits). The LISTEN connection is not
// one of them.
const OWN_POOL = { max: 4, connectionTimeoutMillis: 10_000, keepAlive: true, allowExitOnIdle: true } as const

/**
 * Opens the store `o` describes, on one connection (a new connection costs more than the dozen round
 * trips of an open).
 * @throws StoreError (`open`) when the server, the schema or the lease fails; (`recover`) when the
 *   rows cannot be read back
 */
export async function openStore(o: ResolvedPostgresOptions): Promise<Opened> {
  const ownsPool = o.pool === undefined
  const pool = o.pool ?? ownPool(o)
  const name = storeName(o, pool)
  try {
    const client = await pool.connect().catch((error: unknown) => {
      throw storeFailure(name, 'open', error)
    })
    return await openOn(client, { pool, ownsPool, name, sql: statements(o.schema) }, o)
  } catch (error) {
    if (ownsPool) await pool.end().catch(() => {})
    throw error
  }
}

async function openOn(
  client: pg.PoolClient,
  parts: Pick<Opened, 'pool' | 'ownsPool' | 'name' | 'sql'>,
  o: ResolvedPostgresOptions,
): Promise<Opened> {
  const { pool, name, sql } = parts
  let lease: Lease | undefined
  let operation: 'open' | 'recover' = 'open'
  let broken: Error | undefined
  try {
    await ensureSchema(client, sql, o.schema, name)
    lease = await Lease.acquire(client, sql, o.journal, o.owner, o.leaseMs)
    await run(client, sql.registerJournal, [o.journal])
    const key = lockKey(o.schema, o.journal)
    const first = await takeOver(client, sql, lease, key, true)
    if (first.outcome === 'lost') throw new Error(lease.lost ?? 'the lease was lost while opening')
    operation = 'recover'
    await run(client, sql.pruneKeys, [o.journal, o.wallNow()])
    const contents = await readContents(client, sql, lease, o.wallNow())
    return { ...parts, lease, lockKey: key, contents }
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error))
    await lease?.release(pool).catch(() => {}) // on the pool: this connection may be the problem
    throw storeFailure(name, operation, error)
  } finally {
    client.release(broken)
  }
}

/** Everything the store holds for its owner: its messages, the journal's letters and live keys. */
async function readContents(db: Queryable, sql: Statements, lease: Lease, now: number): Promise<StoreContents> {
  const messages = await run<{ body: JournalRecord }>(db, sql.ownMessages, [lease.journal, lease.owner])
  const letters = await run<{ body: DeadLetter }>(db, sql.deadLetters, [lease.journal])
  const keys = await run<{ body: KeyRecord }>(db, sql.liveKeys, [lease.journal, now])
  return {
    messages: messages.rows.map((r) => r.body),
    deadLetters: letters.rows.map((r) => r.body),
    keys: keys.rows.map((r) => r.body),
  }
}

function ownPool(o: ResolvedPostgresOptions): pg.Pool {
  const config: pg.PoolConfig = { ...OWN_POOL, application_name: `flowing:${o.journal}`.slice(0, 63) }
  if (o.connectionString !== undefined) config.connectionString = o.connectionString
  const pool = new pg.Pool(config)
  // An idle connection the server drops (a restart) is an 'error' on the pool; the pool discards it
  // and the next commit connects again. Without a listener the event would end the process.
  pool.on('error', () => {})
  return pool
}

/** `postgres:` host, port, database, then `#schema.journal` — never the password. */
function storeName(o: ResolvedPostgresOptions, pool: pg.Pool): string {
  const where = o.connectionString === undefined ? fromConfig(pool) : fromUrl(o.connectionString)
  return `postgres:${where}#${o.schema}.${o.journal}`
}

function fromUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString)
    const host = url.searchParams.get('host') ?? decodeURIComponent(url.host)
    return `${host || 'localhost'}${decodeURIComponent(url.pathname) || '/'}`
  } catch {
    return 'server'
  }
}

function fromConfig(pool: pg.Pool): string {
  const options = (pool as { options?: pg.PoolConfig }).options ?? {}
  if (options.connectionString !== undefined) return fromUrl(options.connectionString)
  const host = options.host ?? process.env['PGHOST'] ?? 'localhost'
  const port = options.port ?? process.env['PGPORT']
  const database = options.database ?? process.env['PGDATABASE'] ?? ''
  return `${host}${port === undefined ? '' : `:${port}`}/${database}`
}
