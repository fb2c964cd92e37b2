/**
 * **@flowing/sqlite** — a durable journal for a Flowing loop in one SQLite file (better-sqlite3, WAL
 * mode): every accepted message, dead letter and finished idempotency key survives a `kill -9`; one
 * synchronous transaction per batch, over 130k row writes/s batched; the file stays near the size of what
 * is unfinished.
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
 * @packageDocumentation
 * @module @flowing/sqlite
 */
export { JournalLockedError, type JournalOwner } from './errors.js'
export { type InspectOptions, inspectJournal, type JournalSummary } from './inspect.js'
export { type SqliteStoreOptions, SYNCHRONOUS_MODES, type SynchronousMode } from './options.js'
export { type CompactionReport, SqliteStore, sqliteStore } from './sqlite-store.js'
