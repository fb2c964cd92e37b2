/**
 * The journal store contract: where a loop created with `store` keeps every accepted message it has
 * not finished, its dead letters and its finished idempotency keys, so a crash (`kill -9`, an OOM kill)
 * loses nothing that was committed. `@flowing/sqlite` (embedded, one file) and `@flowing/postgres`
 * implement it; {@link MemoryStore} is the reference.
 *
 * The loop writes in batches — one {@link Store.commit} per event-loop turn at most, never one per
 * message — and reads once, at `start()`, with {@link Store.recovered}.
 *
 * @module
 */
import type { AttemptRecord, DeadLetter } from './failures.js'
import type { LedgerEntry } from './idempotency.js'
import type { JobState } from './jobs.js'
import type { MessageHeaders, MessageKey } from './message.js'
import type { HistogramSnapshot } from './metrics.js'
import type { PriorityLevel } from './priority.js'
import type { RetryOptions } from './retry.js'
import type { ScheduleState } from './schedules.js'

/**
 * Where a journaled message was at its last recorded transition: `queued` (ready, parked behind its
 * key, held by a breaker or running — all of them run again after a crash), `delayed` (not due yet),
 * `retry-scheduled` (backing off after a failed attempt).
 *
 * @group Journal
 */
export type JournalState = 'queued' | 'delayed' | 'retry-scheduled'

/**
 * One unfinished message, as the journal keeps it: what a restarted loop needs to continue it.
 *
 * @group Journal
 */
export interface JournalRecord {
  /** Its id (the row's key: a later record with the same id replaces it). */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its payload as JSON text (absent for an `undefined` payload). */
  readonly payloadJson?: string
  /** Its key, if any. */
  readonly key?: MessageKey
  /** Its priority. */
  readonly priority: PriorityLevel
  /** The trace id it shares with its follow-ups. */
  readonly traceId: string
  /** Follow-up depth. */
  readonly hops: number
  /** Where it was. */
  readonly state: JournalState
  /** For `delayed` and `retry-scheduled`: when it is due, in ms since the Unix epoch. */
  readonly dueAtEpochMs?: number
  /** The attempts it made and finished (an attempt a crash interrupted is not among them). */
  readonly attempts: readonly AttemptRecord[]
  /** Its idempotency key, if any. */
  readonly idempotencyKey?: string
  /** What its handler passed to `ctx.commit()`, if it committed (a retry resumes after it). */
  readonly checkpoint?: unknown
  /** Its per-post retry policy, if it had one. */
  readonly retry?: RetryOptions
  /** Its per-post handler deadline, if it had one. */
  readonly handlerTimeoutMs?: number
  /** Its key group, if it was posted with one. */
  readonly group?: string
  /** Its headers, if it has any. */
  readonly headers?: MessageHeaders
  /** Its job key, if it was posted with one. */
  readonly job?: JobState
  /** The schedule it holds, when it is a schedule's next fire. */
  readonly schedule?: ScheduleState
  /**
   * Attempts of it that a crash of the process interrupted, counted at each recovery (absent: none).
   * At the loop's `maxCrashes` it is dead-lettered with a `CrashLoopError` instead of running.
   */
  readonly crashes?: number
  /**
   * Set while an attempt of it runs: a record recovered with it set was interrupted by a crash (the
   * recovery counts one more of its `crashes`).
   */
  readonly running?: true
}

/**
 * A finished idempotency key (`done` or `failed`): a duplicate post after a restart still runs nothing.
 *
 * @group Journal
 */
export interface KeyRecord {
  /** The idempotency key (the row's key). */
  readonly key: string
  /** Its entry (state `done` or `failed`, and the last checkpoint). */
  readonly entry: LedgerEntry
  /** When it expires, in ms since the Unix epoch: a store may drop it from then on. */
  readonly expiresAtEpochMs: number
}

/**
 * Everything a store held when it was opened: what `start()` recovers.
 *
 * @group Journal
 */
export interface StoreContents {
  /** Unfinished messages, in the order each was first journaled (post order). */
  readonly messages: readonly JournalRecord[]
  /** Dead letters, oldest first. */
  readonly deadLetters: readonly DeadLetter[]
  /** Finished idempotency keys that have not expired. */
  readonly keys: readonly KeyRecord[]
}

/**
 * One atomic write: every change since the previous batch. Within a batch an id appears at most once
 * across `messages` and `removed` (and likewise for letters and keys).
 *
 * @group Journal
 */
export interface JournalBatch {
  /** Messages to insert or replace (by id); a new id goes after every id already kept. */
  readonly messages: readonly JournalRecord[]
  /** Ids of messages that finished (or were recovered under a new id): their rows go. */
  readonly removed: readonly string[]
  /** Dead letters to insert or replace (by id). */
  readonly deadLetters: readonly DeadLetter[]
  /** Ids of dead letters that left the store (replayed, purged, evicted). */
  readonly deadLettersRemoved: readonly string[]
  /** Finished keys to insert or replace (by key). */
  readonly keys: readonly KeyRecord[]
  /** Keys that were released (a key re-claimed, or freed because its message never ran). */
  readonly keysRemoved: readonly string[]
}

/**
 * A journal. The loop that owns it (one loop per store) calls {@link Store.recovered} once at
 * `start()`, {@link Store.commit} for each batch — never two at once, in order — and
 * {@link Store.close} at the end of `stop()`.
 *
 * A commit must be atomic: after a crash the store holds every batch whose commit returned (or whose
 * promise resolved), and nothing of a batch whose commit failed or had not returned. A failing commit
 * throws (or rejects): the loop keeps the batch, reports a `StoreError`, refuses new posts and tries
 * again; it loses nothing it accepted.
 *
 * @example
 * ```ts
 * import { createLoop, MemoryStore } from '@flowing/core'
 *
 * const store = new MemoryStore()
 * const loop = createLoop<{ hello: string }>({ store })
 * loop.on('hello', () => {})
 * loop.post('hello', 'world')
 * await loop.flushed() // the message is in the store now
 * await loop.stop()
 * ```
 *
 * @group Journal
 */
export interface Store {
  /** A name for errors and events, such as `sqlite:/var/lib/app/journal.db`. */
  readonly name: string
  /** What the store held when it was opened (the loop reads it once, at `start()`). */
  recovered(): StoreContents
  /** Writes one batch atomically. */
  commit(batch: JournalBatch): void | PromiseLike<void>
  /** Releases the store (its file, its connections) once the loop's last batch is committed. */
  close(): void | PromiseLike<void>
  /**
   * Optional, for stores shared by several processes: the loop calls it once, at `start()`, with a
   * callback that re-admits messages the store takes over while the loop runs (the rows of a process
   * whose lease expired). Rows handed to `adopt` belong to this store from then on.
   */
  watch?(adopt: (contents: StoreContents) => void): void
}

/**
 * The options of `createLoop()` about its journal: the store, and the crash-loop guard.
 *
 * @group Journal
 */
export interface DurabilityOptions {
  /**
   * A journal (`sqliteStore()` of `@flowing/sqlite`, `postgresStore()` of `@flowing/postgres`): every
   * accepted message is committed to it within one event-loop turn, and `start()` recovers what a
   * crashed or stopped predecessor left there. A loop with a store starts only when told (`autoStart`
   * must not be `true`) and accepts posts from `start()` on, after what it recovered. A fixed `idPrefix`
   * gets a per-process suffix (`orders.x1Yz2Q`), so no id repeats across restarts.
   */
  readonly store?: Store
  /**
   * The crash-loop guard of a loop with a `store`: a journaled message whose attempts were interrupted
   * by this many crashes of the process (`kill -9`, an out-of-memory kill, a native fault, a
   * `process.exit` in a library) is dead-lettered with a `CrashLoopError` at its next start, without
   * running again, and the messages behind it on its key run. An attempt that ended (in success or
   * failure) never counts. `Infinity` turns the guard off; a type may set its own (`loop.on`'s
   * `maxCrashes`). Without a `store` nothing is counted and nothing is paid.
   * @defaultValue 3
   */
  readonly maxCrashes?: number
}

/**
 * The journal's figures, in `loop.metrics().journal`.
 *
 * @group Journal
 */
export interface JournalStats {
  /** The store's name. */
  readonly store: string
  /** Messages with a row in the store (committed, unfinished). */
  readonly rows: number
  /** Messages whose latest transition waits for the next commit. */
  readonly pending: number
  /** Batches committed. */
  readonly commits: number
  /** Commits that failed (each was tried again). */
  readonly failedCommits: number
  /** Whether the last commit failed (posts are refused until one succeeds). */
  readonly failing: boolean
  /** Time per commit, from the call to its return or resolution (ms). */
  readonly commitTime: HistogramSnapshot
}
