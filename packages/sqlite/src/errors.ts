/**
 * The error of a journal that another store (or another program) holds: one owner per journal.
 *
 * @module
 */
import { hostname } from 'node:os'
import { StoreError } from '@flowing/core'

/**
 * The store that holds a journal, as it recorded itself when it opened the file.
 *
 * @group Errors
 */
export interface JournalOwner {
  /** Its process id. */
  readonly pid: number
  /** The host name of its machine (`os.hostname()`). */
  readonly host: string
  /** The absolute path it opened the journal by (a symlink, a hard link or the file itself). */
  readonly path: string
  /** When it opened the journal, in ms since the Unix epoch. */
  readonly openedAtEpochMs: number
}

/**
 * A journal is open already, by another store in this process or another one (whatever path reached
 * the file: a symlink, a hard link, `..`, a bind mount), or locked by another program (the `sqlite3`
 * shell, a backup). Thrown by {@link sqliteStore} and {@link inspectJournal} at once, without waiting,
 * and without touching the file.
 *
 * @remarks A `StoreError` with `operation` `'open'` and `code` `'ERR_FLOWING_STORE'`; its message names
 * the file and its {@link JournalLockedError.owner} when the owner recorded itself. The lock is SQLite's
 * exclusive lock on the file, held from open to close; the operating system releases it when the owner's
 * process dies, so a `kill -9` never blocks the next open.
 *
 * @example
 * ```text
 * Journal store sqlite:/var/lib/orders/journal.db failed to open: the file /var/lib/orders/journal.db is
 * open by another store: pid 4242 on host web-1 opened it as /var/lib/orders/journal.db at
 * 2025-06-01T09:30:00.000Z; one store per journal — close that store first, or give this one another file
 * ```
 *
 * @group Errors
 */
export class JournalLockedError extends StoreError {
  /** The journal's real path: symlinks and `..` resolved. */
  readonly file: string
  /**
   * The store holding the file, if it could be told: `undefined` for a store that opened the file
   * through a path whose directory differs (a hard link, a bind-mounted file) in another process, a
   * store of an earlier release, or another program.
   */
  readonly owner: JournalOwner | undefined

  /**
   * @param store - the refused store's name (`sqlite:<path>`)
   * @param file - the journal's real path
   * @param owner - the store holding it, if known
   * @param cause - SQLite's `SQLITE_BUSY`, when the lock refused the open
   */
  constructor(store: string, file: string, owner: JournalOwner | undefined, cause?: unknown) {
    super(store, 'open', lockedProblem(file, owner), cause)
    this.file = file
    this.owner = owner
  }
}

function lockedProblem(file: string, owner: JournalOwner | undefined): string {
  if (owner === undefined) {
    return (
      `the file ${file} is locked by another connection, which did not record its owner beside the file ` +
      '(a store that opened it through a hard link or a bind-mounted file, a store of an earlier release, ' +
      'or another program: the sqlite3 shell, a backup); one store per journal — close it first'
    )
  }
  const here = owner.pid === process.pid && owner.host === hostname() ? ' (this process)' : ''
  const at = new Date(owner.openedAtEpochMs).toISOString()
  return (
    `the file ${file} is open by another store: pid ${owner.pid} on host ${owner.host}${here} opened it as ` +
    `${owner.path} at ${at}; one store per journal — close that store first, or give this one another file`
  )
}
