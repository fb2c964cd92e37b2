/**
 * How a held message ends with the server: acknowledged once its follow-ups (and, for a dead letter,
 * the letter) are stored — and only while both its lease and its partition's ownership hold; handed
 * back (`nak`) when it cannot be done here; dead-lettered unrun after `maxDeliveries`. An ack sent while
 * the connection is down waits for the reconnection.
 *
 * @module
 */
import { type DeadLetter, deadLetterOf, errorInfo, type SnapshotMessage, wallNow } from '@flowing/core'
import type { JsMsg } from '@nats-io/jetstream'
import { DeliveryLimitError } from '../errors.js'
import type { Wire } from './codec.js'
import type { Delivery } from './deliveries.js'
import type { RunnerCounters, RunnerParts } from './runner-parts.js'

/** What settling needs of the runner's parts. */
export type SettlerParts = Pick<
  RunnerParts<never>,
  'clock' | 'deliveries' | 'holds' | 'ledger' | 'deadLetters' | 'handovers' | 'maxDeliveries' | 'report'
> & {
  /** Told of each acknowledgement sent (kept, to be sent again if the server loses it). */
  readonly acked?: (d: Delivery) => void
  /** Told of each message finished here, whether its acknowledgement went out or was withheld. */
  readonly finished?: (d: Delivery) => void
}

/** Settles held messages with the server. */
export class Settler {
  readonly #p: SettlerParts
  readonly #counters: RunnerCounters
  readonly #unsent: Delivery[] = []
  // The acknowledgements of this turn of the event loop: sent together, one socket write for them all.
  readonly #acking: Delivery[] = []
  // What a stop handed back with a wait left, by partition: stream sequence → not before (epoch ms).
  readonly #waits = new Map<number, Map<number, number>>()

  constructor(parts: SettlerParts, counters: RunnerCounters) {
    this.#p = parts
    this.#counters = counters
  }

  /**
   * Gives up every delivery still held (after the local loop stopped), each handed back to its
   * consumer after what it still had to wait; the partition's next owner replaces the consumer and
   * gets them at once, so the waits are also recorded (see {@link Settler.recordHandBacks}). Returns
   * how many.
   */
  handBack(unfinished: readonly SnapshotMessage[]): number {
    this.flushAcks()
    const wait = new Map(unfinished.map((sm) => [sm.id, Math.ceil(sm.dueInMs ?? 0)]))
    let handed = 0
    for (const [id, d] of [...this.#p.deliveries.entries()]) {
      this.#p.deliveries.take(id)
      this.forget(d)
      const ms = wait.get(id) ?? 0
      if (ms > 0) {
        const waits = this.#waits.get(d.partition) ?? new Map<number, number>()
        this.#waits.set(d.partition, waits.set(d.jm.seq, wallNow(this.#p.clock) + ms))
      }
      if (this.nak(d, ms)) handed++
    }
    return handed
  }

  /** Stores the waits of what {@link Settler.handBack} handed back, for the partitions' next owners. */
  async recordHandBacks(): Promise<void> {
    const waits = [...this.#waits]
    this.#waits.clear()
    await Promise.all(waits.map(([p, w]) => this.#p.handovers.handedBack(p, w).catch(this.#p.report)))
  }

  // A redelivered message resumes after the commit point its last holder reached.
  async checkpointOf(wire: Wire): Promise<unknown> {
    if (wire.idempotencyKey === undefined || this.#p.ledger === undefined) return undefined
    const entry = await this.#p.ledger.peek(wire.idempotencyKey).catch(() => undefined)
    return entry?.state === 'committed' ? entry.checkpoint : undefined
  }

  async settle(d: Delivery, letter: DeadLetter | undefined): Promise<void> {
    if (!this.valid(d)) {
      if (letter === undefined) this.succeededUnacked(d)
      this.#counters.fenced++ // the server's again: no letter, no ack from here
      d.release()
      return
    }
    try {
      if (d.followUps.length > 0) await Promise.all(d.followUps)
      if (letter !== undefined) await this.#p.deadLetters.publish({ ...letter, id: d.wire.id }, d.wire)
    } catch (error) {
      // Its follow-ups or its letter are not stored: it is not done; the server hands it out again.
      this.#p.report(error)
      this.nak(d, 1000)
      return
    }
    if (letter !== undefined) this.#counters.deadLettered++
    this.ack(d)
  }

  /**
   * `d` succeeded here but may not be acknowledged (its lease or partition went): done all the same
   * when nothing is left to store, so a redelivery to this process is acknowledged rather than run.
   */
  succeededUnacked(d: Delivery): void {
    if (d.followUps.length === 0) this.#p.finished?.(d)
  }

  /** The connection is back: the acknowledgements held while it was down go, if their leases hold. */
  reconnected(): void {
    for (const d of this.#unsent.splice(0)) this.#ackNow(d)
  }

  /**
   * Acknowledges `d` at the end of this turn of the event loop, with the others of the turn. Until then
   * it stays held: a handover waits for it, and whatever drops held messages sends the queued
   * acknowledgements first ({@link Settler.flushAcks}).
   */
  ack(d: Delivery): void {
    if (this.#acking.push(d) === 1) setImmediate(this.flushAcks)
  }

  /** Sends the acknowledgements queued so far. */
  readonly flushAcks = (): void => {
    if (this.#acking.length === 0) return
    for (const d of this.#acking.splice(0)) {
      try {
        this.#ackNow(d)
      } catch (error) {
        this.#p.report(error) // a connection closed under it: the server hands the message out again
        d.release()
      }
    }
  }

  // An ack sent while the connection is down would be buffered and could reach the server after its
  // `ack_wait`: it waits for the reconnection, and goes only if the lease still holds then.
  #ackNow(d: Delivery): void {
    if (!this.#p.deliveries.connected && !d.lost) {
      this.#unsent.push(d)
      return
    }
    this.#p.finished?.(d)
    if (this.valid(d)) {
      d.jm.ack()
      this.#counters.acked++
      this.#p.acked?.(d)
    } else this.#counters.fenced++ // the lease or the partition was lost: it is another owner's to run
    d.release()
  }

  // Hands `d` back (unless its lease lapsed: it is the server's already); returns whether it did.
  nak(d: Delivery, delayMs: number): boolean {
    const valid = this.valid(d)
    if (valid) {
      d.jm.nak(delayMs)
      this.#counters.nakked++
    }
    d.release()
    return valid
  }

  // Its lease holds and its partition is still this process's under the token it came with.
  valid(d: Delivery): boolean {
    return this.#p.deliveries.valid(d, this.#p.clock.now()) && this.#p.holds(d.partition, d.token)
  }

  forget(d: Delivery): void {
    if (d.wire.idempotencyKey !== undefined) this.#p.ledger?.forget(d.wire.idempotencyKey)
  }

  // Delivered `count` times without an outcome — it keeps killing or freezing its process: it goes to
  // the dead letters without running again.
  async deadLetterUnfinished(jm: JsMsg, wire: Wire, count: number): Promise<void> {
    const error = errorInfo(new DeliveryLimitError(wire.id, count, this.#p.maxDeliveries), 'unknown')
    const letter: DeadLetter = {
      ...deadLetterOf({ ...wire, routeKey: undefined }, error, [], this.#p.clock),
      ...(wire.idempotencyKey === undefined ? {} : { idempotencyKey: wire.idempotencyKey }),
    }
    try {
      await this.#p.deadLetters.publish(letter, wire)
      this.#counters.deadLettered++
      jm.ack()
    } catch (e) {
      this.#p.report(e)
      jm.nak(1000)
    }
  }
}
