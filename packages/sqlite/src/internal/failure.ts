/**
 * What SQLite's result codes mean for a journal, in words an operator can act on: every failure of
 * the store leaves as a `StoreError` whose message says what happened, what state the journal is in
 * and what to do, with the driver's error as its `cause`.
 *
 * @internal
 * @module
 */
import { StoreError, type StoreOperation } from '@flowing/core'

/** The code better-sqlite3's `SqliteError` carries (`SQLITE_FULL`, `SQLITE_IOERR_WRITE` …), if any. */
export function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined
}

/** Why the operation failed, by result code (the primary code: `SQLITE_IOERR_WRITE` → `SQLITE_IOERR`). */
const MEANINGS: Readonly<Record<string, string>> = {
  SQLITE_FULL:
    'the disk (or the `maxBytes` quota) is full; free space, or let rows drain — a batch that only removes rows still fits',
  SQLITE_READONLY:
    'the database is read-only; the file and its directory must be writable by this process (SQLite writes a `-wal` file beside it)',
  SQLITE_CORRUPT: 'the database file is corrupt; restore it from a backup (see the README)',
  SQLITE_NOTADB: 'the file is not a SQLite database',
  SQLITE_CANTOPEN:
    'the file cannot be opened; its directory must exist and be writable, and the path must not be a directory',
  SQLITE_BUSY: 'another connection holds the database lock',
  SQLITE_LOCKED: 'another connection holds the database lock',
  SQLITE_IOERR: 'an I/O error from the file system',
  SQLITE_PERM: 'the file system denied access',
  SQLITE_NOMEM: 'SQLite ran out of memory',
}

/** What a failed commit left behind: nothing, as the transaction rolled back. */
const NOTHING_WRITTEN = 'nothing of the batch was written'

/**
 * The `StoreError` for `error`, thrown by the driver during `operation`.
 *
 * @param store - the store's name
 * @param operation - what it was doing
 * @param error - what the driver (or the file system) threw
 * @param context - a clause naming what was being done, e.g. "while creating the schema"
 */
export function storeFailure(store: string, operation: StoreOperation, error: unknown, context?: string): StoreError {
  if (error instanceof StoreError) return error
  const code = sqliteCode(error)
  const primary = code?.replace(/^(SQLITE_[A-Z]+?)(_[A-Z_]+)?$/, '$1')
  const meaning = (primary === undefined ? undefined : MEANINGS[primary]) ?? 'an unexpected error'
  const where = context === undefined ? '' : ` ${context}`
  const written = operation === 'commit' ? `; ${NOTHING_WRITTEN}` : ''
  const detail = error instanceof Error ? error.message : String(error)
  return new StoreError(store, operation, `${meaning}${where}${written} (${code ?? 'error'}: ${detail})`, error)
}
