/**
 * Keeps a long-running journal small. The batches delete finished rows themselves; what is left to do
 * is occasional, and runs after a commit at most once per {@link MAINTENANCE_EVERY_COMMITS} commits or
 * {@link MAINTENANCE_EVERY_MS} of wall time, whichever comes first:
 *
 * 1. delete the idempotency keys that expired (a range scan of `keys_by_expiry`);
 * 2. give free pages back to the file system once they are a quarter of the file and at least 1 MiB
 *    (`PRAGMA incremental_vacuum`; the file was created with `auto_vacuum = INCREMENTAL`) — after a
 *    backlog drained, not in a steady state, where SQLite reuses free pages anyway;
 * 3. `PRAGMA wal_checkpoint(TRUNCATE)`: copy the log into the database and truncate the `-wal` file to
 *    zero bytes (between runs SQLite's own checkpoints every 1000 pages keep it near 4 MiB, and
 *    `journal_size_limit` trims it after a burst).
 *
 * A failure here never fails the commit it follows (that batch is durable already); it is kept in
 * {@link Maintenance.lastError} and the next run tries again.
 *
 * @internal
 * @module
 */
import type Database from 'better-sqlite3'
import type { Tables } from './tables.js'

/** Commits between two maintenance runs at most. */
export const MAINTENANCE_EVERY_COMMITS = 1000
/** Wall time between two maintenance runs at most, while commits arrive (an idle store does nothing). */
export const MAINTENANCE_EVERY_MS = 30_000
/** Free pages below which the file is left as it is: vacuuming a few pages buys nothing. */
const MIN_FREE_PAGES = 256

/** What one maintenance run did. */
export interface MaintenanceReport {
  /** Expired idempotency keys deleted. */
  readonly expiredKeys: number
  /** Pages given back to the file system. */
  readonly freedPages: number
  /** Whether the log was checkpointed whole and truncated (false if a reader held it). */
  readonly checkpointed: boolean
}

/** The maintenance schedule of one connection. */
export class Maintenance {
  /** The error of the last run that failed, cleared by the next run that succeeds. */
  lastError: unknown = undefined
  readonly #db: Database.Database
  readonly #tables: Tables
  // Commits since the last run, and the wall time it ran: the two triggers.
  #commits = 0
  #lastRunAt: number

  constructor(db: Database.Database, tables: Tables, now: number) {
    this.#db = db
    this.#tables = tables
    this.#lastRunAt = now
  }

  /** Counts a commit and runs maintenance when one of its triggers is due; never throws. */
  afterCommit(now: number): void {
    this.#commits++
    if (this.#commits < MAINTENANCE_EVERY_COMMITS && now - this.#lastRunAt < MAINTENANCE_EVERY_MS) return
    try {
      this.run(now)
    } catch (error) {
      this.lastError = error
    }
  }

  /**
   * Runs every step now.
   *
   * @throws the driver's error if a step fails
   */
  run(now: number): MaintenanceReport {
    this.#commits = 0
    this.#lastRunAt = now
    const db = this.#db
    const expiredKeys = this.#tables.expireKeys(now)
    const pages = db.pragma('page_count', { simple: true }) as number
    const free = db.pragma('freelist_count', { simple: true }) as number
    let freedPages = 0
    if (free >= MIN_FREE_PAGES && free * 4 >= pages) {
      db.pragma('incremental_vacuum')
      freedPages = free - (db.pragma('freelist_count', { simple: true }) as number)
    }
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[]
    this.lastError = undefined
    return { expiredKeys, freedPages, checkpointed: result !== undefined && result.busy === 0 }
  }
}
