/**
 * A read-only look into a journal file — what a loop would recover from it — without opening it as a
 * store. A store holds its file exclusively from open to close: while one is open, the look is refused
 * at once, naming it.
 *
 * @module
 */
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { JournalState } from '@flowing/core'
import Database from 'better-sqlite3'
import { storeFailure } from './internal/failure.js'
import { lockRefusal, refuseIfOpenHere } from './internal/owner.js'
import { checkSchema, SCHEMA_VERSION } from './internal/schema.js'

/**
 * What {@link inspectJournal} found.
 *
 * @group Inspection
 */
export interface JournalSummary {
  /** The journal's absolute path. */
  readonly path: string
  /** The schema version of the file. */
  readonly schemaVersion: number
  /** Unfinished messages by state. */
  readonly messages: Readonly<Record<JournalState, number>>
  /** Dead letters. */
  readonly deadLetters: number
  /** Finished idempotency keys not expired (what a restart would recover). */
  readonly keys: number
  /** Keys expired but not deleted yet (the store deletes them at open and every 1000 commits). */
  readonly expiredKeys: number
  /** Sizes in bytes: the database file, its `-wal` file (0 if absent), and the free pages within. */
  readonly bytes: { readonly database: number; readonly wal: number; readonly free: number }
}

/**
 * Options of {@link inspectJournal}.
 *
 * @group Inspection
 */
export interface InspectOptions {
  /**
   * The wall clock that tells expired keys, in ms since the Unix epoch.
   *
   * @defaultValue Date.now
   */
  readonly wallNow?: () => number
}

/**
 * Counts what the journal at `path` holds, reading it through a read-only connection: after its store
 * closed (or crashed), not while one is open.
 *
 * @param path - the journal file (it must exist)
 * @param options - the clock that tells expired keys
 * @throws JournalLockedError (a `StoreError`, `open`) at once while a store (or another program) holds
 *   the file, naming it
 * @throws StoreError (`open`) for a missing file, a file that is not a journal or another schema version
 *
 * @example
 * ```ts no-run
 * import { inspectJournal } from '@flowing/sqlite'
 *
 * const summary = inspectJournal('/var/lib/orders/journal.db')
 * console.log(summary.messages.queued, summary.deadLetters, summary.bytes.wal)
 * ```
 *
 * @group Inspection
 */
export function inspectJournal(path: string, options: InspectOptions = {}): JournalSummary {
  const absolute = resolve(path)
  const name = `sqlite:${absolute}`
  const now = (options.wallNow ?? Date.now)()
  let db: Database.Database | undefined
  try {
    refuseIfOpenHere(name, absolute)
    db = new Database(absolute, { readonly: true, fileMustExist: true, timeout: 0 })
    checkSchema(db, name)
    const messages: Record<JournalState, number> = { queued: 0, delayed: 0, 'retry-scheduled': 0 }
    const byState = db.prepare('SELECT state, count(*) FROM messages GROUP BY state').raw().all() as [string, number][]
    for (const [state, count] of byState) messages[state as JournalState] = count
    const count = (sql: string, ...params: number[]) =>
      db
        ?.prepare(sql)
        .pluck()
        .get(...params) as number
    const pageSize = db.pragma('page_size', { simple: true }) as number
    return {
      path: absolute,
      schemaVersion: SCHEMA_VERSION,
      messages,
      deadLetters: count('SELECT count(*) FROM dead_letters'),
      keys: count('SELECT count(*) FROM keys WHERE expires_at > ?', now),
      expiredKeys: count('SELECT count(*) FROM keys WHERE expires_at <= ?', now),
      bytes: {
        database: statSync(absolute).size,
        wal: statSync(`${absolute}-wal`, { throwIfNoEntry: false })?.size ?? 0,
        free: (db.pragma('freelist_count', { simple: true }) as number) * pageSize,
      },
    }
  } catch (error) {
    throw lockRefusal(name, absolute, error) ?? storeFailure(name, 'open', error, 'while inspecting it')
  } finally {
    db?.close()
  }
}
