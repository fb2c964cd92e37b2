/**
 * `@flowing/postgres`: a journal store for Flowing in PostgreSQL — one statement per batch, several
 * processes sharing one journal under leases with fencing tokens, and takeover of the messages of a
 * process that died; and {@link createEnqueuer}, which writes messages in the application's own
 * transactions (they run if it commits, never if it rolls back).
 *
 * @example
 * ```ts no-run
 * import { createLoop } from '@flowing/core'
 * import { postgresStore } from '@flowing/postgres'
 *
 * const store = await postgresStore({ connectionString: 'postgres://app@db/orders' })
 * const loop = createLoop<{ 'order.paid': { id: string } }>({ store })
 * ```
 *
 * @module @flowing/postgres
 */
export {
  createEnqueuer,
  type Enqueued,
  type EnqueueOptions,
  Enqueuer,
  type EnqueuerOptions,
} from './enqueue.js'
export type { LeaseState } from './internal/lease.js'
export type { PostgresStoreOptions } from './options.js'
export { PostgresStore, postgresStore } from './postgres-store.js'
