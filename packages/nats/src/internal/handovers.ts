/**
 * What a partition's next owner must know of its past owners, kept in the owners bucket under
 * `c.<partition>` (one small JSON value per partition, written only at a handover):
 *
 * - **Crashes.** Each owner makes the partition's consumer anew, and a new consumer counts deliveries
 *   from 1. So a process that takes a partition over from a dead owner adds one interrupted delivery
 *   for each message the dead owner's consumer had handed out and not seen acknowledged; a message's
 *   deliveries are its consumer's count plus these, and `maxDeliveries` still ends a message that keeps
 *   killing its process. A graceful handover (a rebalance, a stop) adds none.
 * - **Waits.** A process that stops hands back a retry that was backing off; its next owner gets it at
 *   once (the consumer is new), so the stopping process records when it may run again, and the next
 *   owner schedules it then.
 *
 * @module
 */
import { type Clock, wallNow } from '@flowing/core'
import type { KV } from '@nats-io/kv'
import type { SeqRange } from './topology.js'

/** A range may name at most this many messages (a consumer's max_ack_pending is lower). */
const MAX_RANGE = 10_000

/** One partition's record, by stream sequence. */
export interface PartitionPast {
  /** Interrupted deliveries. */
  readonly crashes: ReadonlyMap<number, number>
  /** Not before this wall-clock time (epoch ms). */
  readonly waits: ReadonlyMap<number, number>
}

interface Stored {
  c?: Record<string, number>
  w?: Record<string, number>
}

/** The handover records of a loop's partitions. */
export class Handovers {
  readonly #kv: KV
  readonly #clock: Clock

  constructor(kv: KV, clock: Clock) {
    this.#kv = kv
    this.#clock = clock
  }

  /**
   * Reads partition `p`'s record as its new owner; for a takeover, first adds one crash for each
   * sequence in `retired` (dropping what lies at or below every retired consumer's acknowledged floor:
   * those are gone).
   */
  async gained(p: number, retired: readonly SeqRange[]): Promise<PartitionPast> {
    const past = await this.#read(p)
    if (retired.length === 0) return past
    const floor = Math.min(...retired.map((r) => r.after))
    const crashes = new Map([...past.crashes].filter(([seq]) => seq > floor))
    for (const r of retired) {
      for (let seq = Math.max(r.after, r.upTo - MAX_RANGE) + 1; seq <= r.upTo; seq++) {
        crashes.set(seq, (crashes.get(seq) ?? 0) + 1)
      }
    }
    const waits = new Map([...past.waits].filter(([seq]) => seq > floor))
    await this.#write(p, { crashes, waits })
    return { crashes, waits }
  }

  /** Records, as a stopping owner, when each handed-back message of partition `p` may run again. */
  async handedBack(p: number, notBefore: ReadonlyMap<number, number>): Promise<void> {
    const past = await this.#read(p)
    await this.#write(p, { crashes: past.crashes, waits: new Map([...past.waits, ...notBefore]) })
  }

  async #read(p: number): Promise<PartitionPast> {
    const entry = await this.#kv.get(`c.${p}`)
    const stored: Stored = entry === null || entry.operation !== 'PUT' ? {} : (entry.json() as Stored)
    const now = wallNow(this.#clock)
    const map = (record: Record<string, number> | undefined) =>
      new Map(Object.entries(record ?? {}).map(([seq, n]) => [Number(seq), n]))
    return { crashes: map(stored.c), waits: new Map([...map(stored.w)].filter(([, at]) => at > now)) }
  }

  async #write(p: number, past: PartitionPast): Promise<void> {
    const stored: Stored = { c: Object.fromEntries(past.crashes), w: Object.fromEntries(past.waits) }
    await this.#kv.put(`c.${p}`, JSON.stringify(stored))
  }
}
