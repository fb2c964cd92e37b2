/**
 * Opening a journal: the checks a file system can answer in words (a missing directory, a directory
 * given as the file, a file or directory this process cannot write), then the connection and its
 * exclusive lock (see `owner.ts`), the schema and one read of everything it holds. Either the store comes
 * out whole, its owner recorded, or the connection is closed and a `StoreError` (`open` or `recover`)
 * says why. The checks and the lock come before anything is written: a refused open (the file is
 * locked, read-only, not a journal) leaves no `-wal` or `-journal` file behind and the file as it was.
 *
 * @internal
 * @module
 */
import { accessSync, constants, type Stats, statSync } from 'node:fs'
import { dirname } from 'node:path'
import type { StoreContents } from '@flowing/core'
import { StoreError } from '@flowing/core'
import Database from 'better-sqlite3'
import { storeFailure } from './failure.js'
import { lockJournal, Ownership, refuseIfOpenHere } from './owner.js'
import { type Pragmas, prepareConnection } from './schema.js'
import { Tables } from './tables.js'

/** An open journal. */
export interface OpenJournal {
  readonly db: Database.Database
  readonly tables: Tables
  readonly contents: StoreContents
  /** This process's claim on the file, to release before the connection closes. */
  readonly ownership: Ownership
}

/** What opening needs. */
export interface OpenRequest extends Pragmas {
  /** The store's name, for errors. */
  readonly name: string
  /** The absolute path. */
  readonly path: string
  readonly busyTimeoutMs: number
  /** The wall time now (ms since the epoch): keys expired by then are deleted, not recovered. */
  readonly now: number
}

/**
 * Opens (creating if need be) the journal at `request.path` and reads it.
 *
 * @throws StoreError (`open`) if the file cannot be opened or read, is not a journal or has another
 *   schema; (`recover`) if a row is not valid JSON
 */
export function openJournal(request: OpenRequest): OpenJournal {
  checkPath(request.name, request.path)
  refuseIfOpenHere(request.name, request.path)
  let db: Database.Database | undefined
  try {
    // No busy timeout while the lock is taken: a journal another connection holds is refused at once.
    db = new Database(request.path, { timeout: 0 })
    lockJournal(db, request.name, request.path)
    db.pragma(`busy_timeout = ${request.busyTimeoutMs}`)
    prepareConnection(db, request.name, request, request.now)
    const tables = new Tables(db)
    tables.expireKeys(request.now)
    const contents = tables.read(request.name, request.now)
    return { db, tables, contents, ownership: new Ownership(request.path, Date.now()) }
  } catch (error) {
    db?.close()
    // A driver error while reading (a corrupt page) fails the open: the file is not a readable journal.
    // A row that is not JSON fails with `recover` (thrown as such by Tables.read): the file is fine.
    throw storeFailure(request.name, 'open', error)
  }
}

/**
 * The failures the file system names better than SQLite's "unable to open database file", and the ones
 * SQLite would find only after creating files (a read-only journal in a writable directory gets an empty
 * `-wal` file first). A path whose `stat` fails otherwise (a permission) is left to SQLite, whose error
 * then says so.
 */
function checkPath(name: string, path: string): void {
  const directory = dirname(path)
  let dir: Stats | undefined
  let file: Stats | undefined
  try {
    dir = statSync(directory, { throwIfNoEntry: false })
    file = dir?.isDirectory() === true ? statSync(path, { throwIfNoEntry: false }) : undefined
  } catch {
    return
  }
  if (dir === undefined) {
    throw new StoreError(name, 'open', `its directory ${directory} does not exist (create it first)`)
  }
  if (!dir.isDirectory()) throw new StoreError(name, 'open', `${directory} is not a directory`)
  if (file?.isDirectory() === true) throw new StoreError(name, 'open', 'the path is a directory, not a file')
  if (file !== undefined) checkWritable(name, path, 'the file')
  checkWritable(name, directory, `its directory ${directory}`)
}

/**
 * Refuses a path this process may not write (`access(2)`: root passes whatever the permission bits say,
 * as it writes through them). A file it may not read fails in SQLite's open, before anything is created.
 *
 * @throws StoreError (`open`) naming `what`, with the file system's error as `cause`
 */
function checkWritable(name: string, path: string, what: string): void {
  try {
    accessSync(path, constants.W_OK)
  } catch (error) {
    const problem =
      `${what} is read-only for this process; the journal and its directory must be writable ` +
      `(SQLite writes a \`-wal\` file beside the journal) (${(error as Error).message})`
    throw new StoreError(name, 'open', problem, error)
  }
}
