/**
 * **@flowing/nats** — scale-out for a Flowing loop on NATS JetStream: the same handlers across
 * processes and machines. This first part is the shared idempotency ledger: a KV bucket whose every
 * write is a compare-and-set, so a process that lost a key to a redelivery elsewhere is fenced off.
 *
 * @example
 * ```ts no-run
 * import { connect } from '@nats-io/transport-node'
 * import { KvIdempotencyStore } from '@flowing/nats'
 *
 * const nc = await connect({ servers: '127.0.0.1:4222' })
 * const ledger = await KvIdempotencyStore.open(nc, { bucket: 'orders-ledger', ttlMs: 86_400_000 })
 * ```
 *
 * @packageDocumentation
 * @module @flowing/nats
 */
export {
  CLAIM_ATTEMPTS,
  KvIdempotencyStore,
  type KvIdempotencyStoreOptions,
  LedgerContendedError,
  LedgerFencedError,
} from './kv-ledger.js'
