/**
 * Opening a journal: the checks a file system can answer in words (a missing directory, a directory
 * given as the file), then the connection, the schema and one read of everything it holds. Either
 * the store comes out whole or the connection is closed and a `StoreError` (`open` or `recover`)
 * says why.
 *
 * @internal
 * @module
 */
import { type Stats, statSync } from 'node:fs'
import { dirname } from 'node:path'
import type { StoreContents } from '@flowing/core'
import { StoreError } from '@flowing/core'
import Database from 'better-sqlite3'
import { storeFailure } from './failure.js'
import { type Pragmas, prepareConnection } from './schema.js'
import { Tables } from './tables.js'

/** An open journal. */
export interface OpenJournal {
  readonly db: Database.Database
  readonly tables: Tables
  readonly contents: StoreContents
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
  let db: Database.Database | undefined
  try {
    db = new Database(request.path, { timeout: request.busyTimeoutMs })
    prepareConnection(db, request.name, request, request.now)
    const tables = new Tables(db)
    tables.expireKeys(request.now)
    const contents = tables.read(request.name, request.now)
    return { db, tables, contents }
  } catch (error) {
    db?.close()
    // A driver error while reading (a corrupt page) fails the open: the file is not a readable journal.
    // A row that is not JSON fails with `recover` (thrown as such by Tables.read): the file is fine.
    throw storeFailure(request.name, 'open', error)
  }
}

/**
 * The failures the file system names better than SQLite's "unable to open database file". A path
 * whose `stat` fails otherwise (a permission) is left to SQLite, whose error then says so.
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
}
