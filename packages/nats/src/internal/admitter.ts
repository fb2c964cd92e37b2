/**
 * A delivery's way into the local loop and back: re-admitted (`loop.readmit`, so its trace, hops and
 * idempotency key continue and a redelivery takes its key over), held under its partition, and settled
 * with the server when the local loop reports its outcome.
 *
 * @module
 */
import { type DeadLetter, type Message, type MessageMap, wallNow } from '@flowing/core'
import type { JsMsg } from '@nats-io/jetstream'
import { DeliveryError } from '../errors.js'
import { toSnapshotMessage, type Wire } from './codec.js'
import type { Delivery } from './deliveries.js'
import type { Owned, RunnerCounters, RunnerParts } from './runner-parts.js'
import type { Settler } from './settler.js'

/** Admits deliveries into the local loop and settles them as they end there. */
export class Admitter<M extends MessageMap> {
  readonly #p: RunnerParts<M>
  readonly #counters: RunnerCounters
  readonly #settler: Settler
  // The delivery being re-admitted: an outcome reported before `readmit` returns belongs to it.
  #admitting: Delivery | undefined
  #admittingEnded = false

  constructor(parts: RunnerParts<M>, counters: RunnerCounters, settler: Settler) {
    this.#p = parts
    this.#counters = counters
    this.#settler = settler
    const events = parts.local.events
    events.on('succeeded', (m) => this.#ended(m, undefined, true))
    events.on('dropped', (m, reason) => {
      if (reason === 'duplicate') counters.skipped++ // its idempotency key is done elsewhere
      this.#ended(m, undefined, false)
    })
    // `cancelled` comes from the local loop's stop or from a lost partition: such a message is not
    // done — its partition's next owner gets it.
    events.on('cancelled', (m) => parts.deliveries.takeDropped(m.id))
    events.on('dead-lettered', (m, letter) => this.#ended(m, letter, false))
  }

  /** Re-admits `jm` (carrying `wire`) into the local loop, held under partition `o`. */
  admit(jm: JsMsg, wire: Wire, o: Owned, checkpoint: unknown): void {
    const waitMs = o.past.waits.size === 0 ? 0 : (o.past.waits.get(jm.seq) ?? 0) - wallNow(this.#p.clock) // handed back
    const d = newDelivery(jm, wire, o, this.#p.clock.now())
    if (wire.idempotencyKey !== undefined) this.#p.ledger?.expect(wire.idempotencyKey, wire.id)
    o.held.add(d)
    this.#admitting = d
    this.#admittingEnded = false
    let m: Message<M> | undefined
    try {
      m = this.#p.local.readmit(toSnapshotMessage(wire, checkpoint, waitMs > 0 ? waitMs : undefined))
    } catch (error) {
      // No handler for its type here, or its idempotency key still held by a stale copy: later.
      this.#settler.forget(d)
      this.#p.report(new DeliveryError(wire.id, wire.type, 'handed back', error))
      this.#settler.nak(d, 1000)
      return
    } finally {
      this.#admitting = undefined
    }
    if (m === undefined) {
      this.#counters.skipped++ // its idempotency key is done: it ran to an end elsewhere
      this.#settler.forget(d)
      this.#settler.ack(d)
      return
    }
    if (!this.#admittingEnded) {
      d.localId = m.id
      this.#p.deliveries.add(m.id, d)
    }
  }

  #ended(m: Message<M>, letter: DeadLetter | undefined, succeeded: boolean): void {
    let d = this.#p.deliveries.take(m.id)
    if (d === undefined && this.#admitting !== undefined) {
      d = this.#admitting
      this.#admittingEnded = true
    }
    if (d === undefined) {
      // Dropped while it ran (its partition started over): it succeeded here all the same, unacknowledged.
      const dropped = this.#p.deliveries.takeDropped(m.id)
      if (dropped !== undefined && succeeded) this.#settler.succeededUnacked(dropped)
      return
    }
    this.#settler.forget(d)
    this.#settler.settle(d, letter).catch(this.#p.report)
  }
}

// A delivery just taken, held under partition `o` (`release` lets it go from there).
function newDelivery(jm: JsMsg, wire: Wire, o: Owned, now: number): Delivery {
  const d: Delivery = {
    jm,
    wire,
    partition: o.p,
    token: o.token,
    extendedAt: now,
    lost: false,
    followUps: [],
    followUpAttempt: 0,
    followUpCount: 0,
    release: () => o.held.delete(d),
  }
  return d
}
