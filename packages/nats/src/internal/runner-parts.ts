/**
 * The contract types of the consuming side: what a runner works with, its counters, and an owned
 * partition's state.
 *
 * @module
 */
import type { Clock, Loop, MessageMap } from '@flowing/core'
import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream'
import type { NatsDeadLetters } from '../dead-letters.js'
import type { KvIdempotencyStore } from '../kv-ledger.js'
import type { Deliveries, Delivery } from './deliveries.js'
import type { Handovers, PartitionPast } from './handovers.js'
import type { Topology } from './topology.js'

/** The counters of the consuming side. */
export interface RunnerCounters {
  received: number
  acked: number
  nakked: number
  fenced: number
  redelivered: number
  deadLettered: number
  undecodable: number
  skipped: number
  removedAcked: number
  startedOver: number
  reAcked: number
}

/** How many of an owned partition's latest acknowledgements are kept to be sent again. */
export const RECENT_ACKS = 512

/** Counters at zero. */
export function newCounters(): RunnerCounters {
  return {
    received: 0,
    acked: 0,
    nakked: 0,
    fenced: 0,
    redelivered: 0,
    deadLettered: 0,
    undecodable: 0,
    skipped: 0,
    removedAcked: 0,
    startedOver: 0,
    reAcked: 0,
  }
}

/** What a runner works with. */
export interface RunnerParts<M extends MessageMap> {
  readonly local: Loop<M>
  /** The loop's clock: leases, letters, the pull loops' back-off. */
  readonly clock: Clock
  readonly js: JetStreamClient
  readonly jsm: JetStreamManager
  readonly topology: Topology
  readonly maxDeliveries: number
  /** Messages of one owned partition held at once. */
  readonly maxAckPending: number
  /** How long a graceful handover waits for the partition's running messages (ms). */
  readonly handoverMs: number
  /** Whether this process still owns a partition under a token (`Ownership.holds`). */
  readonly holds: (partition: number, token: number) => boolean
  readonly handovers: Handovers
  readonly deliveries: Deliveries
  readonly ledger: KvIdempotencyStore | undefined
  readonly deadLetters: NatsDeadLetters
  /** Told of what went wrong without a caller to throw to (a letter not stored, a bad message). */
  readonly report: (error: unknown) => void
}

/** One owned partition: its consumer and what this process holds of it. */
export interface Owned {
  readonly p: number
  readonly token: number
  readonly held: Set<Delivery>
  /** Interrupted deliveries and hand-back waits of its past owners, by stream sequence. */
  readonly past: PartitionPast
  iterator: ConsumerMessages
  pulling: boolean
  /** Starting over after a lapsed lease. */
  restarting: boolean
  /** Sweeping acknowledged messages a crashed server brought back (see `Topology.removeAcked`). */
  sweeping: Promise<void> | undefined
  /** The work stream's last sequence at the reconnection the sweep cleans up after (read once). */
  sweepFrom: number | undefined
  /** The last delivery of its consumer this process took (the consumer numbers them from 1). */
  delivered: number
  /** Its latest acknowledgements (a ring of at most `RECENT_ACKS`), sent again if the server lost them. */
  readonly recentAcks: JsMsg[]
  /** The next slot of {@link Owned.recentAcks} to write. */
  recentAt: number
  /** The ack floor up to which acknowledged messages were removed (see `sweeps.ts`). */
  removedUpTo: number
  /** On a cluster, the floor up to which what the server kept started the partition over once (see `sweeps.ts`). */
  keptUpTo: number
  /** Since when (and at which ack floor) audits send the recent acknowledgements again, nothing held. */
  reAcked: { readonly floor: number; readonly at: number } | undefined
  loop: Promise<void>
}

/** The state of partition `p` just gained under `token`, consuming `iterator`. */
export function newOwned(
  p: number,
  token: number,
  past: PartitionPast,
  iterator: ConsumerMessages,
  pulling: boolean,
): Owned {
  const state = { restarting: false, sweeping: undefined, sweepFrom: undefined, delivered: 0, recentAt: 0 }
  const ring = { recentAcks: [], removedUpTo: 0, keptUpTo: 0, reAcked: undefined }
  return { p, token, held: new Set(), past, iterator, pulling, ...state, ...ring, loop: Promise.resolve() }
}
