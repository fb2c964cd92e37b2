/**
 * The SQLite journal store: one file, one synchronous transaction per batch.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { InvalidArgumentError, type JournalBatch, type Store, type StoreContents, StoreError } from '@flowing/core'
import type Database from 'better-sqlite3'
import { storeFailure } from './internal/failure.js'
import { Maintenance } from './internal/maintenance.js'
import { openJournal } from './internal/open.js'
import type { Ownership } from './internal/owner.js'
import { encodeBatch, type Tables } from './internal/tables.js'
import { resolveOptions, type SqliteStoreOptions, type SynchronousMode } from './options.js'

/**
 * What {@link SqliteStore.compact} did.
 *
 * @group Store
 */
export interface CompactionReport {
  /** Expired idempotency keys deleted. */
  readonly expiredKeys: number
  /** Pages (4 KiB each) given back to the file system. */
  readonly freedPages: number
  /** Whether the `-wal` file was checkpointed whole and truncated (false while a reader held it). */
  readonly checkpointed: boolean
}

/**
 * A {@link Store} in one SQLite file (better-sqlite3, WAL mode): every accepted message survives a
 * `kill -9`, and with `synchronous: 'full'` a power loss too.
 *
 * @remarks
 * **Atomicity.** {@link SqliteStore.commit} is one `BEGIN IMMEDIATE … COMMIT` over prepared
 * statements, synchronous; every row's JSON is made before it starts. A batch is in the file whole
 * or not at all — after a failure (a value JSON cannot take, a full disk, a lock held too long) and
 * after a crash at any instant.
 *
 * **Order.** Messages come back in the order each was first journaled: the row's `INTEGER PRIMARY
 * KEY` is assigned on insert and kept by `ON CONFLICT … DO UPDATE` on replace.
 *
 * **Size.** Finished rows are deleted by the batches that finish them; every 1000 commits (or 30 s)
 * the store deletes expired keys, gives free pages back once they are a quarter of the file, and
 * truncates the `-wal` file. The file stays near the size of what is unfinished.
 *
 * **One owner.** One store per file, enforced: the store holds SQLite's exclusive lock on the file
 * from open to close, so a second store over it — in this process or another, through any path (a
 * symlink, a hard link, `..`, a bind mount) — is refused at once with a {@link JournalLockedError}
 * naming the owner; so is any other connection (the `sqlite3` shell, {@link inspectJournal}) while it is
 * open. The OS releases the lock when the owner's process dies: a `kill -9` never blocks the next open.
 *
 * **Cost.** `commit` is O(rows in the batch) — over 130k row writes/s batched; opening reads every
 * row once, O(rows held).
 *
 * @example
 * ```ts
 * import { mkdtempSync } from 'node:fs'
 * import { tmpdir } from 'node:os'
 * import { join } from 'node:path'
 * import { sqliteStore } from '@flowing/sqlite'
 *
 * const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'journal.db')
 * const store = sqliteStore({ path })
 * console.log(store.recovered().messages.length) // 0: a new file
 * store.close()
 * ```
 *
 * @group Store
 */
export class SqliteStore implements Store {
  /** `sqlite:` and the journal's absolute path, e.g. `sqlite:/var/lib/orders/journal.db`. */
  readonly name: string
  /** The journal's absolute path. */
  readonly path: string
  /** The sync level in force. */
  readonly synchronous: SynchronousMode
  readonly #db: Database.Database
  readonly #tables: Tables
  readonly #maintenance: Maintenance
  readonly #ownership: Ownership
  readonly #wallNow: () => number
  // What the file held at open, kept for recovered(): the loop reads it once, at start().
  readonly #contents: StoreContents
  #closed = false
  #commits = 0

  /**
   * Opens (creating if need be) the journal; {@link sqliteStore} does the same.
   *
   * @param options - the file and its settings
   * @throws InvalidArgumentError for an option that breaks its rule
   * @throws JournalLockedError (a `StoreError`, `open`) for a file another store or program holds
   * @throws StoreError (`open`) for a file that cannot be opened or read or is not a journal,
   *   (`recover`) for a row that is not valid JSON
   */
  constructor(options: SqliteStoreOptions) {
    const o = resolveOptions(options)
    this.path = resolve(o.path)
    this.name = `sqlite:${this.path}`
    this.synchronous = o.synchronous
    this.#wallNow = o.wallNow
    const now = this.#wallNow()
    const opened = openJournal({ ...o, name: this.name, path: this.path, now })
    this.#ownership = opened.ownership
    this.#db = opened.db
    this.#tables = opened.tables
    this.#contents = opened.contents
    this.#maintenance = new Maintenance(opened.db, opened.tables, now)
  }

  /** Batches committed through this handle. */
  get commits(): number {
    return this.#commits
  }

  /** Whether {@link SqliteStore.close} was called. */
  get closed(): boolean {
    return this.#closed
  }

  /**
   * The error of the last periodic compaction that failed (it never fails a commit, and the next one
   * tries again); `undefined` once one succeeds.
   */
  get compactionError(): unknown {
    return this.#maintenance.lastError
  }

  /** What the file held when it was opened (expired keys left out); the same object at every call. */
  recovered(): StoreContents {
    return this.#contents
  }

  /**
   * Writes one batch in one transaction, synchronously.
   *
   * @throws StoreError (`commit`) — closed store, a value JSON cannot take, `SQLITE_FULL`, an I/O error;
   *   nothing of the batch was written
   */
  commit(batch: JournalBatch): void {
    if (this.#closed) throw new StoreError(this.name, 'commit', 'the store is closed; nothing of the batch was written')
    try {
      this.#tables.write(encodeBatch(this.name, batch))
    } catch (error) {
      throw storeFailure(this.name, 'commit', error)
    }
    this.#commits++
    this.#maintenance.afterCommit(this.#wallNow())
  }

  /**
   * Compacts now what the store compacts every 1000 commits: expired keys, free pages (once they are
   * a quarter of the file), the `-wal` file. Useful after a large backlog drained, or before a backup.
   *
   * @throws StoreError (`commit`) if the store is closed or SQLite fails
   */
  compact(): CompactionReport {
    if (this.#closed) throw new StoreError(this.name, 'commit', 'the store is closed')
    try {
      return this.#maintenance.run(this.#wallNow())
    } catch (error) {
      throw storeFailure(this.name, 'commit', error, 'while compacting')
    }
  }

  /**
   * Writes a consistent copy of the journal to a new file at `path`, between two commits (`VACUUM INTO`
   * on the store's own connection — while the store holds the file, no other connection or process may
   * read it). The copy is a journal: a store opens it as it would the original (say, to move a service
   * to another machine). Synchronous: the loop waits meanwhile (milliseconds for a small journal).
   *
   * @param path - where the copy goes: a file that does not exist yet, in an existing directory
   * @returns the copy's absolute path
   * @throws InvalidArgumentError for a path that is not a non-empty string
   * @throws StoreError (`backup`) for a closed store, a file that exists already, the journal itself,
   *   or what SQLite or the file system refuse (a missing directory, no space); nothing is left behind
   */
  backup(path: string): string {
    if (typeof path !== 'string' || path === '') throw new InvalidArgumentError('path', 'a non-empty file path', path)
    const target = resolve(path)
    if (this.#closed) throw new StoreError(this.name, 'backup', 'the store is closed')
    if (existsSync(target))
      throw new StoreError(this.name, 'backup', `${target} exists already (a backup overwrites nothing)`)
    try {
      this.#db.prepare('VACUUM INTO ?').run(target)
    } catch (error) {
      throw storeFailure(this.name, 'backup', error, `while copying to ${target}`)
    }
    return target
  }

  /**
   * Closes the file (SQLite checkpoints the log into it and deletes the `-wal` file) and releases it:
   * the next store may open it. Idempotent.
   *
   * @throws StoreError (`close`) if SQLite fails to close it
   */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#ownership.release()
    try {
      this.#db.close()
    } catch (error) {
      throw storeFailure(this.name, 'close', error)
    }
  }
}

/**
 * Opens (creating if need be) a SQLite journal for a loop's `store` option.
 *
 * @param options - `path` (required), `synchronous` (`'normal'`), `busyTimeoutMs` (5000), `maxBytes`
 * @returns the open store; its {@link SqliteStore.recovered} holds what the file held
 * @throws InvalidArgumentError for an option that breaks its rule, e.g.
 *   ``Expected `options.synchronus` to be one of the known options (…), got `"full"` (string); did you mean `synchronous`?``
 * @throws JournalLockedError (a `StoreError`, `open`) at once for a file another store holds, in this
 *   process or another, through any path; its message names the file and the owner
 * @throws StoreError (`open`) for a file that cannot be opened (missing or read-only directory, a
 *   read-only file, a directory, a corrupt or non-SQLite file, another schema), (`recover`) for a row
 *   that is not valid JSON
 *
 * @example
 * ```ts no-run
 * import { createLoop } from '@flowing/core'
 * import { sqliteStore } from '@flowing/sqlite'
 *
 * const loop = createLoop<{ 'order.paid': { orderId: string } }>({
 *   store: sqliteStore({ path: '/var/lib/orders/journal.db' }),
 * })
 * ```
 *
 * @group Store
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options)
}
