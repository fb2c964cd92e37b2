/**
 * The options of {@link sqliteStore}, and their one validator: every rule is checked before a file is
 * touched, so a typo or a wrong type is an `InvalidArgumentError` naming the option, never a half-open
 * journal.
 *
 * @module
 */

import { InvalidArgumentError } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'

/**
 * How hard a commit waits for the disk (SQLite's `PRAGMA synchronous`, in WAL mode):
 *
 * - `normal` — a commit returns once its pages are in the write-ahead log in the operating system's
 *   cache; the log is fsync'ed at each checkpoint. Survives any crash of the process (`kill -9`, an
 *   OOM kill, an uncaught exception); a power loss or a kernel panic may lose the last batches before
 *   the latest checkpoint, never corrupt the file.
 * - `full` — every commit also fsyncs the log: a batch whose commit returned survives a power loss
 *   too, at the cost of one fsync per batch.
 *
 * @group Store
 */
export type SynchronousMode = 'normal' | 'full'

/**
 * The modes {@link SqliteStoreOptions.synchronous} accepts.
 *
 * @group Store
 */
export const SYNCHRONOUS_MODES: readonly SynchronousMode[] = ['normal', 'full']

/**
 * The options of {@link sqliteStore}.
 *
 * @group Store
 */
export interface SqliteStoreOptions {
  /**
   * The journal file. Relative paths resolve against `process.cwd()`; the directory must exist, and it
   * and the file must be writable. The file is created on first open; while it is open, its `-wal` file
   * and its owner record (`-owner`) are beside it. One store per file: another store already holding it
   * (through any path, in any process) refuses the open with a `JournalLockedError`.
   *
   * @example `'/var/lib/orders/journal.db'`
   */
  readonly path: string
  /**
   * What a committed batch survives: a process crash (`normal`) or a power loss too (`full`).
   *
   * @defaultValue 'normal'
   */
  readonly synchronous?: SynchronousMode
  /**
   * How long SQLite waits for a lock another connection holds, in ms: an integer ≥ 0. Since the store
   * holds its file exclusively from open to close, no other connection can hold one while it is open,
   * and an open that finds the file locked is refused at once: nothing waits on this any more.
   *
   * @deprecated Kept so that existing options still pass; it has no effect.
   * @defaultValue 5000
   */
  readonly busyTimeoutMs?: number
  /**
   * A quota on the database file, in bytes (an integer ≥ 64 KiB): past it a commit that adds rows
   * fails with a `StoreError` (`SQLITE_FULL`) — the loop refuses posts until rows drain — instead of
   * filling the disk. A batch that only removes rows always fits.
   *
   * @defaultValue no quota (the disk's size)
   */
  readonly maxBytes?: number
  /**
   * The wall clock that expires finished idempotency keys, in ms since the Unix epoch (tests pass a
   * fake one).
   *
   * @defaultValue Date.now
   */
  readonly wallNow?: () => number
}

/** {@link SqliteStoreOptions} with every default applied. */
export interface ResolvedSqliteOptions {
  readonly path: string
  readonly synchronous: SynchronousMode
  readonly busyTimeoutMs: number
  readonly maxBytes: number | undefined
  readonly wallNow: () => number
}

const KNOWN = ['path', 'synchronous', 'busyTimeoutMs', 'maxBytes', 'wallNow'] as const
const check = argumentChecks(InvalidArgumentError)
const MIN_MAX_BYTES = 65_536

/**
 * Checks `options` and applies the defaults.
 *
 * @throws InvalidArgumentError naming the first option that breaks its rule (an unknown key included,
 *   with a suggestion for a near miss such as `synchronus`)
 */
export function resolveOptions(options: unknown): ResolvedSqliteOptions {
  const o: Partial<Record<(typeof KNOWN)[number], unknown>> = check.plainObject(
    'options',
    options,
    'an object with a `path`',
  )
  check.knownKeys('options', o, KNOWN)
  if (typeof o.path !== 'string' || o.path.trim() === '' || o.path.includes('\0')) {
    throw new InvalidArgumentError('options.path', 'a non-empty file path', o.path)
  }
  if (o.path === ':memory:' || o.path.startsWith('file:')) {
    throw new InvalidArgumentError('options.path', 'a file path (not `:memory:` nor a `file:` URI)', o.path)
  }
  return {
    path: o.path,
    synchronous: synchronous(o.synchronous),
    busyTimeoutMs: integer('options.busyTimeoutMs', o.busyTimeoutMs, 0, 5000),
    maxBytes: o.maxBytes === undefined ? undefined : integer('options.maxBytes', o.maxBytes, MIN_MAX_BYTES, 0),
    wallNow: wallNow(o.wallNow),
  }
}

function synchronous(value: unknown): SynchronousMode {
  return value === undefined ? 'normal' : check.oneOf('options.synchronous', value, SYNCHRONOUS_MODES)
}

function integer(name: string, value: unknown, min: number, fallback: number): number {
  return value === undefined ? fallback : check.integer(name, value, { min })
}

function wallNow(value: unknown): () => number {
  return value === undefined ? Date.now : check.fn<() => number>('options.wallNow', value)
}
