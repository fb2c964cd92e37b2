/**
 * The journal's schema and the pragmas every connection sets. One version number guards it: a file
 * written by a newer schema, or a SQLite file of another application, is refused at open rather than
 * misread.
 *
 * ```text
 * meta          key TEXT PRIMARY KEY, value TEXT            schema_version, created_at, created_by
 * messages      seq INTEGER PRIMARY KEY, id TEXT UNIQUE,    one unfinished message per row; seq is the
 *               type, state, due_at, record (JSON)          first-journaled order (kept on replace)
 * dead_letters  seq, id UNIQUE, type, at, letter (JSON)     oldest first
 * keys          seq, key UNIQUE, expires_at, record (JSON)  finished idempotency keys
 * ```
 *
 * The JSON columns are the truth; `type`, `state`, `due_at`, `at` and `expires_at` are copies of their
 * fields, for queries in the `sqlite3` shell and for the expiry sweep (nullable, so an odd value such as
 * `NaN` never fails a batch).
 *
 * @internal
 * @module
 */

import { StoreError } from '@flowing/core'
import type Database from 'better-sqlite3'

/** The version of the schema below; stored in `meta` and checked at every open. */
export const SCHEMA_VERSION = 1

/** `PRAGMA application_id` of a Flowing journal: "FLOW" in ASCII, so `file(1)` and tools can tell. */
export const APPLICATION_ID = 0x464c4f57

/**
 * After a checkpoint the `-wal` file is truncated to this size: a burst (a 100k-record batch writes
 * ~40 MB of log) does not leave a large log behind.
 */
const JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024

const DDL = `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE messages (
  seq    INTEGER PRIMARY KEY,
  id     TEXT NOT NULL UNIQUE,
  type   TEXT,
  state  TEXT,
  due_at INTEGER,
  record TEXT NOT NULL
);
CREATE TABLE dead_letters (
  seq    INTEGER PRIMARY KEY,
  id     TEXT NOT NULL UNIQUE,
  type   TEXT,
  at     INTEGER,
  letter TEXT NOT NULL
);
CREATE TABLE keys (
  seq        INTEGER PRIMARY KEY,
  key        TEXT NOT NULL UNIQUE,
  expires_at INTEGER,
  record     TEXT NOT NULL
);
CREATE INDEX keys_by_expiry ON keys (expires_at);
`

/** The connection settings of a store. */
export interface Pragmas {
  readonly synchronous: 'normal' | 'full'
  /** The quota in bytes, if any. */
  readonly maxBytes: number | undefined
}

/**
 * Whether the file holds no table yet: a new journal (an empty file, or a SQLite header alone).
 *
 * @throws the driver's error for a file that is not a database (`SQLITE_NOTADB`)
 */
export function isEmpty(db: Database.Database): boolean {
  return db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() === 0
}

/**
 * Sets what a new journal must have before its first page is written: incremental auto-vacuum (fixed
 * with the first page) and WAL mode (an exclusive connection then writes no rollback `-journal`).
 */
export function prepareNewFile(db: Database.Database): void {
  db.pragma('auto_vacuum = INCREMENTAL')
  db.pragma('journal_mode = WAL')
}

/**
 * Prepares a connection that holds the journal's lock (see `lockJournal`): creates the schema in an
 * empty file, checks it in an existing one, and sets WAL mode, the sync level and the quota.
 *
 * @throws StoreError (`open`) for a file of another application or of a newer schema; the driver's
 *   error for a file that is not a database (the caller translates it)
 */
export function prepareConnection(db: Database.Database, name: string, pragmas: Pragmas, now: number): void {
  if (isEmpty(db)) createSchema(db, now)
  else checkSchema(db, name)
  const mode = db.pragma('journal_mode = WAL', { simple: true })
  if (mode !== 'wal') {
    throw new StoreError(name, 'open', `the file system does not support WAL mode (journal_mode is ${String(mode)})`)
  }
  db.pragma(`synchronous = ${pragmas.synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`)
  if (pragmas.maxBytes !== undefined) {
    const pageSize = db.pragma('page_size', { simple: true }) as number
    db.pragma(`max_page_count = ${Math.max(1, Math.floor(pragmas.maxBytes / pageSize))}`)
  }
}

function createSchema(db: Database.Database, now: number): void {
  db.transaction(() => {
    db.exec(DDL)
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)')
    meta.run('schema_version', String(SCHEMA_VERSION))
    meta.run('created_at', new Date(now).toISOString())
    meta.run('created_by', '@flowing/sqlite')
    db.pragma(`application_id = ${APPLICATION_ID}`)
  })()
}

/**
 * Refuses a file that is not a Flowing journal of this schema version.
 *
 * @throws StoreError (`open`)
 */
export function checkSchema(db: Database.Database, name: string): void {
  const id = db.pragma('application_id', { simple: true }) as number
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get() !== undefined
  if (id !== APPLICATION_ID || !hasMeta) {
    throw new StoreError(name, 'open', 'the file is a SQLite database but not a Flowing journal (it has other tables)')
  }
  const version = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()
  if (version !== String(SCHEMA_VERSION)) {
    throw new StoreError(
      name,
      'open',
      `the journal has schema version ${String(version)}, this @flowing/sqlite reads version ${SCHEMA_VERSION}` +
        (Number(version) > SCHEMA_VERSION ? ' (it was written by a newer release: upgrade)' : ''),
    )
  }
}
