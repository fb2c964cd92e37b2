/**
 * An owner's audit of each partition it owns against what the server says of its consumer — the
 * server may have crashed, or a cluster node that led the consumer died, without this process's
 * connection dropping:
 *
 * - acknowledgements the server lost (it counts more messages unacknowledged than this process holds)
 *   are sent again — acks are idempotent — from the partition's ring of recent ones;
 * - messages the server kept below the consumer's ack floor (their removal not written down) are
 *   removed once the partition is idle (right away after a reconnection) — never past a message this
 *   process holds; on a cluster, where the floor of a consumer whose leader changed can cover
 *   deliveries never acknowledged, they start the partition over instead of being removed;
 * - deliveries the consumer made that this process never got (lost on the way) start the partition
 *   over at once: else they would wait out the ack wait while what follows them on their keys runs;
 * - a message still stored above the floor that the idle consumer counts as delivered and
 *   acknowledged (a restarted server can keep the acknowledgements and lose the removal, or the
 *   floor's stream sequence) starts the partition over too: its new consumer hands the message out
 *   again — this process acknowledges it at once if it finished it lately, else it runs again: never
 *   lost, at worst run twice (effects through `ctx.commit()` stay exactly once).
 *
 * It runs every few seconds, and after a reconnection once a second until the partition is clean.
 *
 * @module
 */
import type { Clock, MessageMap } from '@flowing/core'
import type { Owned, RunnerCounters, RunnerParts } from './runner-parts.js'
import { pause } from './timers.js'
import type { ConsumerState } from './topology.js'

// How often a partition is audited; how often after a reconnection, until clean; and how long
// deliveries the server reports made may take to reach this process's consumer loop.
export const AUDIT_MS = 5000
const SWEEP_MS = 1000
const SETTLE_MS = 250
// How long re-sent acknowledgements may take to move a consumer's floor before the partition starts over.
const REACK_GRACE_MS = 2500

/** What an audit works with. */
export interface SweepHost extends Pick<RunnerParts<MessageMap>, 'jsm' | 'topology' | 'clock'> {
  readonly counters: RunnerCounters
  /** Whether the partition is still owned under this state. */
  readonly owns: (o: Owned) => boolean
  /** Drops what is held of the partition and remakes its consumer. */
  readonly startOver: (o: Owned) => void
}

/** Sweeps `o` after a reconnection (once at a time; a later reconnection widens the running one). */
export function sweepAfterReconnection(o: Owned, host: SweepHost): void {
  o.sweepFrom = undefined // what this reconnection may have brought back: up to the stream's end now
  o.sweeping ??= sweep(o, host).finally(() => {
    o.sweeping = undefined
  })
}

/** One periodic audit of `o` (skipped while it starts over or a sweep runs); never throws. */
export async function audit(o: Owned, host: SweepHost): Promise<void> {
  if (o.restarting || o.sweeping !== undefined || !host.owns(o)) return
  await auditOnce(o, host, undefined).catch(() => {})
}

// Until everything up to the stream's end at the reconnection is known acknowledged or removed,
// audits once a second, removing what is below the floor each time; a server still starting its
// JetStream is asked again.
async function sweep(o: Owned, host: SweepHost): Promise<void> {
  while (host.owns(o) && !o.restarting) {
    await pause(host.clock, SWEEP_MS)
    try {
      o.sweepFrom ??= await host.topology.lastSeq(host.jsm, o.p)
      if (await auditOnce(o, host, o.sweepFrom)) return
    } catch {
      // not answering yet
    }
  }
}

/**
 * One audit; with `upTo` (after a reconnection) it removes below the floor even under load, and says
 * whether everything up to `upTo` is done. Throws what the server's answers throw.
 */
export async function auditOnce(o: Owned, host: SweepHost, upTo: number | undefined): Promise<boolean> {
  const { jsm, topology, clock } = host
  const seen = o.delivered
  const held = o.held.size
  const state = await topology.consumerState(jsm, o.p, o.token)
  if (unacknowledgedAfterReAck(o, state, held, host)) {
    host.startOver(o)
    return false
  }
  const idle = state.ackPending === 0 && state.pending === 0 && held === 0
  // Never past a message held here (see `removeKept`).
  const removable = Math.min(state.ackFloor, lowestHeld(o) - 1)
  if ((idle || upTo !== undefined) && removable > o.removedUpTo && host.owns(o) && !o.restarting) {
    if (!(await removeKept(o, host, removable))) return false
  }
  if (state.delivered > seen && (await stillMissing(o, state.delivered, clock))) {
    host.startOver(o)
    return true
  }
  if (idle && (await orphaned(o, host, state.ackFloor, state.deliveredUpTo))) {
    host.startOver(o)
    return false
  }
  return idle || (upTo !== undefined && state.ackFloor >= upTo)
}

// What the server kept at or below the consumer's floor `floor`. On one server it was acknowledged:
// removed. On a cluster the floor is no proof — a consumer's new leader can count as acknowledged
// deliveries that never were, and removing by it lost messages (the 3-node suite, under load) — so a
// message kept there starts the partition over instead, once: its new consumer hands it out again,
// acknowledged at once if this process finished it lately, else run. False when it started over.
async function removeKept(o: Owned, host: SweepHost, floor: number): Promise<boolean> {
  const { jsm, topology, counters } = host
  if (!topology.replicated) {
    counters.removedAcked += await topology.removeAcked(jsm, o.p, floor)
    o.removedUpTo = floor
    return true
  }
  const kept = await topology.firstStoredAfter(jsm, o.p, Math.max(o.removedUpTo, o.keptUpTo))
  if (kept === undefined || kept > floor || !host.owns(o) || o.restarting) {
    o.removedUpTo = floor
    return true
  }
  o.keptUpTo = floor // a message still kept there after one start over is left alone
  host.startOver(o)
  return false
}

// Whether an idle partition's stream still keeps a message its consumer delivered and counts as
// acknowledged: one it will never hand out again nor see removed.
async function orphaned(o: Owned, host: SweepHost, ackFloor: number, deliveredUpTo: number): Promise<boolean> {
  const first = await host.topology.firstStoredAfter(host.jsm, o.p, Math.max(ackFloor, o.removedUpTo))
  return first !== undefined && first <= deliveredUpTo && host.owns(o) && !o.restarting && o.held.size === 0
}

// The lowest stream sequence of what this process holds of the partition (Infinity: nothing).
function lowestHeld(o: Owned): number {
  let lowest = Number.POSITIVE_INFINITY
  for (const d of o.held) lowest = Math.min(lowest, d.jm.seq)
  return lowest
}

// Sends the partition's recent acknowledgements again when the server counts more unacknowledged than
// this process holds (it lost some of them). Says whether it did so `REACK_GRACE_MS` ago or more,
// nothing held since, and the floor did not move: a consumer's new leader on a cluster can ignore them
// for as long as its ack wait (nats-server 2.9, seen with a node killed under load), stalling the
// partition at maxAckPending — then the partition starts over, and its new consumer's redeliveries of
// what finished here are acknowledged at once, not run.
function unacknowledgedAfterReAck(o: Owned, state: ConsumerState, held: number, host: SweepHost): boolean {
  const now = host.clock.now()
  const last = o.reAcked
  if (state.ackPending <= held || held > 0 || last?.floor !== state.ackFloor) o.reAcked = undefined
  if (state.ackPending <= held) return false
  if (o.reAcked !== undefined && now - o.reAcked.at >= REACK_GRACE_MS) {
    o.reAcked = undefined
    return true
  }
  if (held === 0) o.reAcked ??= { floor: state.ackFloor, at: now }
  for (const jm of o.recentAcks) jm.ack()
  host.counters.reAcked += o.recentAcks.length
  return false
}

// Deliveries the server made and this process has not seen a moment later: lost on the way.
async function stillMissing(o: Owned, delivered: number, clock: Clock): Promise<boolean> {
  await pause(clock, SETTLE_MS)
  return o.delivered < delivered && !o.restarting
}
