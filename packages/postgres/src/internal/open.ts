/**
 * Opening a store: the pool, the schema, the lease, the takeover of dead owners' rows, and everything
 * the store then holds read back — before the factory resolves, so `recovered()` is synchronous.
 *
 * @module
 */
import type { DeadLetter, JournalRecord, KeyRecord, StoreContents } from '@flowing/core'
import pg from 'pg'
import type { ResolvedPostgresOptions } from '../options.js'
import { run } from './db.js'
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
// wait for a connection, keep-alives so a silent network drop is noticed.
const OWN_POOL = { max: 4, connectionTimeoutMillis: 10_000, keepAlive: true } as const

/**
 * Opens the store `o` describes.
 * @throws StoreError (`open`) when the server, the schema or the lease fails; (`recover`) when the
 *   rows cannot be read back
 */
export async function openStore(o: ResolvedPostgresOptions): Promise<Opened> {
  const ownsPool = o.pool === undefined
  const pool = o.pool ?? ownPool(o)
  const name = storeName(o, pool)
  const sql = statements(o.schema)
  let lease: Lease | undefined
  let operation: 'open' | 'recover' = 'open'
  try {
    await ensureSchema(pool, sql, o.schema, name)
    lease = await Lease.acquire(pool, sql, o.journal, o.owner, o.leaseMs)
    const key = lockKey(o.schema, o.journal)
    const first = await takeOver(pool, sql, lease, key, true)
    if (first.outcome === 'lost') throw new Error(lease.lost ?? 'the lease was lost while opening')
    operation = 'recover'
    await run(pool, sql.pruneKeys, [o.journal, o.wallNow()])
    const contents = await readContents(pool, sql, lease, o.wallNow())
    return { name, pool, ownsPool, sql, lease, lockKey: key, contents }
  } catch (error) {
    await lease?.release(pool).catch(() => {})
    if (ownsPool) await pool.end().catch(() => {})
    throw storeFailure(name, operation, error)
  }
}

/** Everything the store holds for its owner: its messages, the journal's letters and live keys. */
async function readContents(pool: pg.Pool, sql: Statements, lease: Lease, now: number): Promise<StoreContents> {
  const [messages, letters, keys] = await Promise.all([
    run<{ body: JournalRecord }>(pool, sql.ownMessages, [lease.journal, lease.owner]),
    run<{ body: DeadLetter }>(pool, sql.deadLetters, [lease.journal]),
    run<{ body: KeyRecord }>(pool, sql.liveKeys, [lease.journal, now]),
  ])
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
