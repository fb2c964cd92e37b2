/**
 * The consuming side of a distributed loop, put together: the runner over the partitions this
 * process owns (each through a consumer of its own) and the options its ownership is kept with.
 *
 * @module
 */
import type { Loop, MessageMap } from '@flowing/core'
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream'
import type { NatsDeadLetters } from '../dead-letters.js'
import type { KvIdempotencyStore } from '../kv-ledger.js'
import type { ResolvedNatsOptions } from '../options.js'
import type { Deliveries } from './deliveries.js'
import { Handovers } from './handovers.js'
import type { OwnershipBuckets, OwnershipOptions } from './ownership.js'
import { Runner } from './runner.js'
import type { Topology } from './topology.js'

/** What the consuming side is made from. */
export interface RunnerWiring<M extends MessageMap> {
  readonly options: ResolvedNatsOptions
  readonly jsm: JetStreamManager
  readonly js: JetStreamClient
  readonly topology: Topology
  readonly ledger: KvIdempotencyStore | undefined
  readonly buckets: OwnershipBuckets
  readonly local: Loop<M>
  readonly deliveries: Deliveries
  readonly deadLetters: NatsDeadLetters
  /** Whether this process still owns a partition under a token. */
  readonly holds: (partition: number, token: number) => boolean
}

/** How this loop's partitions are owned. */
export function ownershipOptions(o: ResolvedNatsOptions): OwnershipOptions {
  const { name, partitions, sessionMs, replicas, clock, onError: report } = o
  return { name, partitions, sessionMs, replicas, clock, report }
}

/** The runner of a loop's partitions. */
export function makeRunner<M extends MessageMap>(w: RunnerWiring<M>): Runner<M> {
  const { options: o, buckets } = w
  return new Runner<M>({
    ...w,
    clock: o.clock,
    maxDeliveries: o.maxDeliveries,
    maxAckPending: o.maxAckPending,
    // A graceful handover lets running messages end: as long as a session or an ack wait, twice.
    handoverMs: 2 * Math.max(o.sessionMs, o.ackWaitMs),
    handovers: new Handovers(buckets.owners, o.clock),
    report: o.onError,
  })
}
