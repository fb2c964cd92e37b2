/**
 * One owner per journal. The guard is SQLite's own lock: the store's connection runs in
 * `locking_mode = EXCLUSIVE` and takes the file's exclusive lock before its first read, holding it until
 * it closes. SQLite's unix VFS keys locks by inode, so every path to the file (a symlink, a hard link,
 * `..`, a bind mount) meets the same lock, in this process (where SQLite shares lock state between
 * connections) and in any other (POSIX `fcntl` locks, released by the OS when a process dies). In WAL mode
 * an exclusive connection keeps its WAL index in heap memory: no `-shm` file.
 *
 * What the lock cannot tell is who holds it (a refused opener cannot read the locked file), so the owner
 * also records itself: in a map of this process, and in a file beside the journal's real path,
 * `<journal>-owner`, removed at close (a stale one, after a `kill -9`, is ignored: it names a dead
 * process or another file).
 *
 * Nothing here opens the journal itself through `node:fs`: closing any descriptor of a file drops every
 * POSIX lock the process holds on it.
 *
 * @internal
 * @module
 */
import { readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import type Database from 'better-sqlite3'
import { JournalLockedError, type JournalOwner } from '../errors.js'
import { sqliteCode } from './failure.js'
import { isEmpty, prepareNewFile } from './schema.js'

/** The owners of the journals open in this process, by file identity (see {@link identityOf}). */
const openHere = new Map<string, JournalOwner>()

/** What the owner writes to `<journal>-owner`: itself, and which file it owns. */
interface OwnerRecord extends JournalOwner {
  /** The identity of the journal it owns. */
  readonly file: string
}

/** The file's identity, `<device>:<inode>` (the same through any path to it); undefined if it is missing. */
export function identityOf(path: string): string | undefined {
  const stats = statSync(path, { bigint: true, throwIfNoEntry: false })
  return stats === undefined ? undefined : `${stats.dev}:${stats.ino}`
}

/** The file's real path (symlinks and `..` resolved); `path` itself if it vanished meanwhile. */
function realPath(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/**
 * Refuses a journal a store of this process holds, before SQLite opens it.
 *
 * @throws JournalLockedError naming that store
 */
export function refuseIfOpenHere(name: string, path: string): void {
  const identity = identityOf(path)
  const owner = identity === undefined ? undefined : openHere.get(identity)
  if (owner !== undefined) throw new JournalLockedError(name, realPath(path), owner)
}

/**
 * Takes the journal for `db` alone, at once (the connection's busy timeout must be 0): sets the
 * exclusive locking mode, prepares a new, empty file (WAL, before its first page is written), then
 * takes the exclusive lock with an empty write transaction. A refused open has created nothing.
 *
 * @throws JournalLockedError if another connection holds the file; the driver's error otherwise (a file
 *   that is not a database)
 */
export function lockJournal(db: Database.Database, name: string, path: string): void {
  db.pragma('locking_mode = EXCLUSIVE')
  try {
    // The first read: on a journal in WAL mode it takes the exclusive lock already.
    if (isEmpty(db)) prepareNewFile(db)
    db.exec('BEGIN EXCLUSIVE')
    db.exec('COMMIT')
  } catch (error) {
    throw lockRefusal(name, path, error) ?? error
  }
}

/** The {@link JournalLockedError} for `error` if it is SQLite's "locked" (`SQLITE_BUSY`), naming the owner. */
export function lockRefusal(name: string, path: string, error: unknown): JournalLockedError | undefined {
  if (sqliteCode(error)?.startsWith('SQLITE_BUSY') !== true) return undefined
  const identity = identityOf(path)
  const real = realPath(path)
  const owner = identity === undefined ? undefined : (openHere.get(identity) ?? recordedOwner(real, identity))
  return new JournalLockedError(name, real, owner, error)
}

/** The ownership of one open journal: recorded when taken, forgotten when released. */
export class Ownership {
  readonly #identity: string
  readonly #record: string

  /**
   * Records this process as the owner of the journal at `path`, whose lock it holds now.
   *
   * @param path - the path the store opened the journal by
   * @param now - the wall time (ms since the epoch)
   */
  constructor(path: string, now: number) {
    this.#identity = identityOf(path) as string
    this.#record = recordPath(realPath(path))
    const owner: JournalOwner = { pid: process.pid, host: hostname(), path, openedAtEpochMs: now }
    openHere.set(this.#identity, owner)
    const record: OwnerRecord = { ...owner, file: this.#identity }
    try {
      writeFileSync(this.#record, `${JSON.stringify(record)}\n`)
    } catch {
      // Only the message of a refused opener in another process needs the record (it then says that
      // the owner is not recorded); the lock guards the journal either way.
    }
  }

  /** Forgets the ownership; called before the connection closes, while the lock still keeps others out. */
  release(): void {
    openHere.delete(this.#identity)
    const record = readRecord(this.#record)
    if (record?.file === this.#identity && record.pid === process.pid) rmSync(this.#record, { force: true })
  }
}

/** Where the owner of the journal whose real path is `real` records itself. */
function recordPath(real: string): string {
  return `${real}-owner`
}

/**
 * The owner recorded beside the journal, if the record is of this file (not of a file since replaced)
 * and its process lives, as far as this host can tell.
 */
function recordedOwner(real: string, identity: string): JournalOwner | undefined {
  const record = readRecord(recordPath(real))
  if (record?.file !== identity || !alive(record)) return undefined
  const { pid, host, path, openedAtEpochMs } = record
  return { pid, host, path, openedAtEpochMs }
}

/** The record at `path`, if there is one that parses as such (one being written does not). */
function readRecord(path: string): OwnerRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as Partial<OwnerRecord> | null
    const valid =
      typeof record?.pid === 'number' &&
      typeof record.host === 'string' &&
      typeof record.path === 'string' &&
      typeof record.openedAtEpochMs === 'number' &&
      typeof record.file === 'string'
    return valid ? (record as OwnerRecord) : undefined
  } catch {
    return undefined
  }
}

/** Whether the owner's process lives: on another host it cannot be told, and is assumed. */
function alive(owner: JournalOwner): boolean {
  if (owner.host !== hostname()) return true
  try {
    process.kill(owner.pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
