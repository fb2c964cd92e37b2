/**
 * **@flowing/nats** — scale-out for a Flowing loop on NATS JetStream: the same handlers across
 * processes and machines. A message's key maps to one of P partitions; one message of a partition
 * runs at a time across every process, so per-key order holds across retries (they back off while
 * the partition waits), delays (they wait in a stream of their own, never early) and crashes (the
 * server hands an unacknowledged message to another process). Dead letters, dedup (`Nats-Msg-Id` and
 * a shared idempotency ledger on KV with a compare-and-set fence) and stream bounds come with it.
 *
 * @example
 * ```ts no-run
 * import { createNatsLoop } from '@flowing/nats'
 *
 * interface Messages { 'order.paid': { orderId: string } }
 * const loop = await createNatsLoop<Messages>({ servers: '127.0.0.1:4222', name: 'orders' })
 * loop.on('order.paid', async (msg) => console.log(msg.payload.orderId))
 * await loop.start()
 * await loop.post('order.paid', { orderId: 'o-1' }, { key: 'o-1' })
 * ```
 *
 * @packageDocumentation
 * @module @flowing/nats
 */

export { createNatsLoop } from './create-nats-loop.js'
export { NatsDeadLetters, type NatsReplayReport, type StoredDeadLetter } from './dead-letters.js'
export {
  DeliveryError,
  DeliveryLimitError,
  LedgerContendedError,
  LedgerEntryError,
  LedgerFencedError,
  PublishError,
  TopologyError,
} from './errors.js'
export type { NatsPostOptions } from './internal/post-input.js'
export type { StreamBackpressureOptions } from './internal/stream-pressure.js'
export { NatsJobKeys } from './jobs.js'
export { CLAIM_ATTEMPTS, KvIdempotencyStore, type KvIdempotencyStoreOptions } from './kv-ledger.js'
export { NatsLoop } from './nats-loop.js'
export type { NatsLoopOptions } from './options.js'
export { NatsSchedules } from './schedules.js'
export type { NatsMetrics, NatsPostResult, NatsStopOptions, NatsStopReport } from './types.js'
