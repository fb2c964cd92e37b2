/**
 * The consuming side of a distributed loop in one process: a pull loop per partition takes the
 * partition's one pending message, re-admits it into the local loop (`loop.readmit`, so its trace,
 * hops and idempotency key continue and a redelivery takes its key over), and waits for its outcome
 * there; the outcome settles it with the server — acknowledged once its follow-ups (and, for a dead
 * letter, the letter) are stored, and only while its lease holds.
 *
 * Retries back off in the local loop while the lease is extended, so the partition stays blocked and
 * no later message of the key overtakes a failed one; a process that dies meanwhile lets the server
 * hand the message to another after `ack_wait`, where it starts again with a fresh attempt count (the
 * delivery count, capped by `maxDeliveries`, stops a message that keeps killing its process).
 *
 * @module
 */
import {
  type Clock,
  type DeadLetter,
  deadLetterOf,
  errorInfo,
  type Loop,
  type Message,
  type MessageMap,
  type SnapshotMessage,
} from '@flowing/core'
import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream'
import type { NatsDeadLetters } from '../dead-letters.js'
import { DeliveryError, DeliveryLimitError } from '../errors.js'
import type { KvIdempotencyStore } from '../kv-ledger.js'
import { decode, toSnapshotMessage, type Wire } from './codec.js'
import type { Deliveries, Delivery } from './deliveries.js'
import { pause } from './timers.js'
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
}

/** What a runner works with. */
export interface RunnerParts<M extends MessageMap> {
  readonly local: Loop<M>
  /** The loop's clock: leases, letters, the pull loops' back-off. */
  readonly clock: Clock
  readonly js: JetStreamClient
  readonly jsm: JetStreamManager
  readonly topology: Topology
  readonly partitions: number
  readonly maxDeliveries: number
  readonly deliveries: Deliveries
  readonly ledger: KvIdempotencyStore | undefined
  readonly deadLetters: NatsDeadLetters
  /** Told of what went wrong without a caller to throw to (a letter not stored, a bad message). */
  readonly report: (error: unknown) => void
}

/** Pulls every partition and settles what it pulled. */
export class Runner<M extends MessageMap> {
  readonly #p: RunnerParts<M>
  readonly #iterators: ConsumerMessages[] = []
  readonly #loops: Promise<void>[] = []
  // The delivery being re-admitted: an outcome reported before `readmit` returns belongs to it.
  #admitting: Delivery | undefined
  #admittingEnded = false
  #pulling = false
  readonly #unsent: Delivery[] = []
  readonly counters: RunnerCounters = {
    received: 0,
    acked: 0,
    nakked: 0,
    fenced: 0,
    redelivered: 0,
    deadLettered: 0,
    undecodable: 0,
    skipped: 0,
  }

  constructor(parts: RunnerParts<M>) {
    this.#p = parts
    const events = parts.local.events
    events.on('succeeded', (m) => this.#ended(m, undefined))
    events.on('dropped', (m, reason) => {
      if (reason === 'duplicate') this.counters.skipped++ // its idempotency key is done elsewhere
      this.#ended(m, undefined)
    })
    // `cancelled` comes only from the local loop's stop: such a message is not done — it stays held
    // until `handBack` returns it to the server.
    events.on('dead-lettered', (m, letter) => this.#ended(m, letter))
  }

  /** Starts a pull loop on every partition. */
  async start(): Promise<void> {
    this.#pulling = true
    for (let p = 0; p < this.#p.partitions; p++) {
      this.#iterators[p] = await this.#consume(p)
      this.#loops.push(this.#pull(p))
    }
  }

  /** Stops pulling; resolves once every pull loop has let its delivery go. */
  async stopPulling(): Promise<void> {
    this.#pulling = false
    for (const it of this.#iterators) it.stop()
  }

  /** Waits for the pull loops to end (after {@link Runner.stopPulling} and the local loop's stop). */
  async ended(): Promise<void> {
    await Promise.allSettled(this.#loops)
  }

  /**
   * Hands every delivery still held back to the server (after the local loop stopped), each after
   * what it still had to wait; returns how many.
   */
  handBack(unfinished: readonly SnapshotMessage[]): number {
    const wait = new Map(unfinished.map((sm) => [sm.id, sm.dueInMs ?? 0]))
    let handed = 0
    for (const [id, d] of [...this.#p.deliveries.entries()]) {
      this.#p.deliveries.take(id)
      this.#forget(d)
      if (this.#nak(d, Math.ceil(wait.get(id) ?? 0))) handed++
    }
    return handed
  }

  #consume(p: number): Promise<ConsumerMessages> {
    const { js, topology } = this.#p
    return js.consumers.get(topology.work, topology.consumer(p)).then((c) => c.consume({ max_messages: 1 }))
  }

  // One partition's loop: a delivery at a time. The client re-pulls across reconnects by itself; if
  // the iteration still ends or breaks (its consumer deleted and made again, say), it starts over.
  async #pull(p: number): Promise<void> {
    while (this.#pulling) {
      try {
        for await (const jm of this.#iterators[p] as ConsumerMessages) {
          if (!this.#pulling) {
            jm.nak()
            continue
          }
          await this.#receive(jm, p)
        }
      } catch (error) {
        this.#p.report(error)
      }
      if (!this.#pulling) return
      await pause(this.#p.clock, 500)
      this.#iterators[p] = await this.#consume(p).catch((error: unknown) => {
        this.#p.report(error)
        return this.#iterators[p] as ConsumerMessages
      })
    }
  }

  async #receive(jm: JsMsg, p: number): Promise<void> {
    this.counters.received++
    let wire: Wire
    try {
      wire = decode(jm.headers, jm.data, this.#p.clock)
    } catch (error) {
      // Another publisher's message: acknowledged (a terminated one would stay in the work-queue
      // stream for ever), reported.
      this.counters.undecodable++
      this.#p.report(new DeliveryError(`${jm.subject}#${jm.seq}`, 'not a Flowing message', 'dropped', error))
      jm.ack()
      return
    }
    if (this.#p.deliveries.suspect(this.#p.clock.now()) && (await this.#stale(jm, p))) {
      this.counters.fenced++ // handed to another process while this one was frozen: not ours to run
      return
    }
    const count = jm.info.deliveryCount
    if (count > 1) this.counters.redelivered++
    if (count > this.#p.maxDeliveries) return this.#deadLetterUnfinished(jm, wire, count)
    const checkpoint = count > 1 ? await this.#checkpointOf(wire) : undefined
    await new Promise<void>((release) => this.#admit(jm, wire, p, checkpoint, once(release)))
  }

  // The server gives every delivery, redeliveries too, the consumer's next sequence: one past this
  // delivery's means the message went out again since.
  async #stale(jm: JsMsg, p: number): Promise<boolean> {
    const { jsm, topology } = this.#p
    const info = await jsm.consumers.info(topology.work, topology.consumer(p)).catch(() => undefined)
    return info === undefined || info.delivered.consumer_seq > jm.info.deliverySequence
  }

  // A redelivered message resumes after the commit point its last holder reached.
  async #checkpointOf(wire: Wire): Promise<unknown> {
    if (wire.idempotencyKey === undefined || this.#p.ledger === undefined) return undefined
    const entry = await this.#p.ledger.peek(wire.idempotencyKey).catch(() => undefined)
    return entry?.state === 'committed' ? entry.checkpoint : undefined
  }

  #admit(jm: JsMsg, wire: Wire, partition: number, checkpoint: unknown, release: () => void): void {
    const d: Delivery = {
      jm,
      wire,
      partition,
      extendedAt: this.#p.clock.now(),
      lost: false,
      followUps: [],
      followUpAttempt: 0,
      followUpCount: 0,
      release,
    }
    if (wire.idempotencyKey !== undefined) this.#p.ledger?.expect(wire.idempotencyKey, wire.id)
    this.#admitting = d
    this.#admittingEnded = false
    let m: Message<M> | undefined
    try {
      m = this.#p.local.readmit(toSnapshotMessage(wire, checkpoint))
    } catch (error) {
      // No handler for its type here, or its idempotency key still held by a stale copy: later.
      this.#p.report(new DeliveryError(wire.id, wire.type, 'handed back', error))
      this.#forget(d)
      this.#nak(d, 1000)
      return
    } finally {
      this.#admitting = undefined
    }
    if (m === undefined) {
      this.counters.skipped++ // its idempotency key is done: it ran to an end elsewhere
      this.#forget(d)
      this.#ack(d)
      return
    }
    if (!this.#admittingEnded) this.#p.deliveries.add(m.id, d)
  }

  #ended(m: Message<M>, letter: DeadLetter | undefined): void {
    let d = this.#p.deliveries.take(m.id)
    if (d === undefined && this.#admitting !== undefined) {
      d = this.#admitting
      this.#admittingEnded = true
    }
    if (d === undefined) return
    this.#forget(d)
    this.#settle(d, letter).catch(this.#p.report)
  }

  async #settle(d: Delivery, letter: DeadLetter | undefined): Promise<void> {
    if (!this.#p.deliveries.valid(d, this.#p.clock.now())) {
      this.counters.fenced++ // the server's again: no letter, no ack from here
      d.release()
      return
    }
    try {
      if (d.followUps.length > 0) await Promise.all(d.followUps)
      if (letter !== undefined) await this.#p.deadLetters.publish({ ...letter, id: d.wire.id }, d.wire)
    } catch (error) {
      // Its follow-ups or its letter are not stored: it is not done; the server hands it out again.
      this.#p.report(error)
      this.#nak(d, 1000)
      return
    }
    if (letter !== undefined) this.counters.deadLettered++
    this.#ack(d)
  }

  /** The connection is back: the acknowledgements held while it was down go, if their leases hold. */
  reconnected(): void {
    for (const d of this.#unsent.splice(0)) this.#ack(d)
  }

  // An ack sent while the connection is down would be buffered and could reach the server after its
  // `ack_wait`: it waits for the reconnection, and goes only if the lease still holds then.
  #ack(d: Delivery): void {
    if (!this.#p.deliveries.connected && !d.lost) {
      this.#unsent.push(d)
      return
    }
    if (this.#p.deliveries.valid(d, this.#p.clock.now())) {
      d.jm.ack()
      this.counters.acked++
    } else this.counters.fenced++ // the lease lapsed: the server may have handed it to another process
    d.release()
  }

  // Hands `d` back (unless its lease lapsed: it is the server's already); returns whether it did.
  #nak(d: Delivery, delayMs: number): boolean {
    const valid = this.#p.deliveries.valid(d, this.#p.clock.now())
    if (valid) {
      d.jm.nak(delayMs)
      this.counters.nakked++
    }
    d.release()
    return valid
  }

  #forget(d: Delivery): void {
    if (d.wire.idempotencyKey !== undefined) this.#p.ledger?.forget(d.wire.idempotencyKey)
  }

  // Delivered `count` times without an outcome — it keeps killing or freezing its process: it goes to
  // the dead letters without running again.
  async #deadLetterUnfinished(jm: JsMsg, wire: Wire, count: number): Promise<void> {
    const error = errorInfo(new DeliveryLimitError(wire.id, count, this.#p.maxDeliveries), 'unknown')
    const letter: DeadLetter = {
      ...deadLetterOf({ ...wire, routeKey: undefined }, error, [], this.#p.clock),
      ...(wire.idempotencyKey === undefined ? {} : { idempotencyKey: wire.idempotencyKey }),
    }
    try {
      await this.#p.deadLetters.publish(letter, wire)
      this.counters.deadLettered++
      jm.ack()
    } catch (e) {
      this.#p.report(e)
      jm.nak(1000)
    }
  }
}

function once(fn: () => void): () => void {
  let called = false
  return () => {
    if (called) return
    called = true
    fn()
  }
}
