/**
 * `createNatsLoop()`: connects, makes sure the streams, consumers and buckets exist, and builds the loop.
 *
 * @module
 */
import { InvalidArgumentError, type MessageMap } from '@flowing/core'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { ownershipOptions } from './internal/consuming.js'
import { NatsJobs } from './internal/job-keys.js'
import { Ownership } from './internal/ownership.js'
import { ScheduleKeeper } from './internal/schedule-keeper.js'
import { SharedFlow } from './internal/shared-flow.js'
import { Topology } from './internal/topology.js'
import { KvIdempotencyStore } from './kv-ledger.js'
import { NatsLoop } from './nats-loop.js'
import { type NatsLoopOptions, resolveOptions } from './options.js'

/**
 * Connects, makes sure the streams and consumers exist (refusing ones made for another partition
 * count), and returns the loop, not yet pulling: register handlers, then `start()`.
 *
 * @example
 * ```ts no-run
 * import { createNatsLoop } from '@flowing/nats'
 *
 * interface Messages { 'order.paid': { orderId: string } }
 * const loop = await createNatsLoop<Messages>({ servers: '127.0.0.1:4222', name: 'orders' })
 * loop.on('order.paid', async (msg) => console.log(msg.payload.orderId))
 * await loop.start()
 * await loop.post('order.paid', { orderId: 'o-1' }, { key: 'o-1' }) // stored in the stream
 * await loop.stop()
 * ```
 *
 * @throws InvalidArgumentError for a bad option; TopologyError for streams this process cannot share;
 * the client's error when the server cannot be reached
 *
 * @group NATS loop
 */
export async function createNatsLoop<M extends MessageMap = MessageMap>(
  options: NatsLoopOptions,
): Promise<NatsLoop<M>> {
  const o = resolveOptions(options)
  const own = options.connection === undefined
  const nc = options.connection ?? (await connect({ servers: options.servers as string[], maxReconnectAttempts: -1 }))
  try {
    const jsm = await jetstreamManager(nc)
    const topology = new Topology(o)
    await topology.ensure(jsm)
    const ledger =
      o.idempotencyTtlMs === undefined ? undefined : await openLedger(nc, topology.keys, o.idempotencyTtlMs, o.replicas)
    const buckets = await Ownership.buckets(nc, ownershipOptions(o))
    const circuits = await SharedFlow.bucket(nc, o.name, o.replicas)
    const schedules = await ScheduleKeeper.bucket(nc, o.name, o.replicas)
    const jobs = await NatsJobs.bucket(nc, o.name, o.replicas)
    return new NatsLoop<M>({ nc, own, jsm, topology, options: o, ledger, buckets, circuits, schedules, jobs })
  } catch (error) {
    if (own) await nc.close()
    throw error
  }
}

// The ledger's bucket, its TTL error named as this loop's option.
async function openLedger(nc: NatsConnection, bucket: string, ttlMs: number, replicas: number) {
  try {
    return await KvIdempotencyStore.open(nc, { bucket, ttlMs, replicas })
  } catch (error) {
    if (!(error instanceof InvalidArgumentError) || error.argument !== 'options.ttlMs') throw error
    throw new InvalidArgumentError('options.idempotency.ttlMs', error.rule, error.value, { cause: error })
  }
}
