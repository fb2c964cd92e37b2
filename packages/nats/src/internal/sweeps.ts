/**
 * What an owner does for each of its partitions once its connection is back — the server may have
 * crashed and come back: it removes what its consumer saw acknowledged and the stream still holds
 * (`Topology.removeAcked`), and starts the partition over when the consumer made deliveries this
 * process never got.
 *
 * @module
 */
import type { Clock, MessageMap } from '@flowing/core'
import type { Owned, RunnerCounters, RunnerParts } from './runner-parts.js'
import { pause } from './timers.js'

// How often a partition is swept after a reconnection, until clean; and how long deliveries the
// server reports made may take to reach this process's consumer loop.
const SWEEP_MS = 1000
const SETTLE_MS = 250

/** What a sweep works with. */
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

// Until the partition's consumer has seen everything up to the stream's end at the reconnection
// acknowledged (its floor moves as this process acks what it holds), removes what is below the floor
// — once a second; a server still starting its JetStream is asked again. A consumer that made
// deliveries this process never got (lost as the server went down) starts over at once: else they
// would wait out the ack wait, and what follows them on their keys would run first.
async function sweep(o: Owned, host: SweepHost): Promise<void> {
  const { jsm, topology, clock } = host
  while (host.owns(o) && !o.restarting) {
    await pause(clock, SWEEP_MS)
    try {
      o.sweepFrom ??= await topology.lastSeq(jsm)
      const seen = o.delivered
      const { removed, clean, delivered } = await topology.removeAcked(jsm, o.p, o.token, o.sweepFrom)
      host.counters.removedAcked += removed
      if (delivered > seen && (await stillMissing(o, delivered, clock))) return host.startOver(o)
      if (clean) return
    } catch {
      // not answering yet
    }
  }
}

// Deliveries the server made and this process has not seen a moment later: lost on the way.
async function stillMissing(o: Owned, delivered: number, clock: Clock): Promise<boolean> {
  await pause(clock, SETTLE_MS)
  return o.delivered < delivered && !o.restarting
}
