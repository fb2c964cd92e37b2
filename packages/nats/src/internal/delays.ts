/**
 * Delayed messages, on a server without message scheduling (2.9): they wait in their own stream, never
 * in their partition (where they would block their key). Every process pulls from it; a message not
 * due yet is handed back with a `nak` of the time it still has to wait, and the server redelivers it
 * then; a due one is published into its partition — with a message id derived from its own, so a
 * mover that dies between the publish and the ack publishes a duplicate the server drops — and only
 * then acknowledged. A message is therefore never early (the mover reads the wall-clock time of the
 * loop's clock), and late by the redelivery's latency. The wait itself is the server's (a `nak`
 * delay): a virtual clock decides when a message is due, not when the server hands it back.
 *
 * @module
 */
import { type Clock, wallNow } from '@flowing/core'
import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream'
import { decode, type Wire } from './codec.js'
import { partitionOf } from './partition.js'
import type { Publisher } from './publisher.js'
import type { Topology } from './topology.js'

// The longest single wait the mover asks for (a longer delay is handed back several times).
const MAX_NAK_MS = 3_600_000

/** Moves due messages from the delayed stream into their partitions. */
export class DelayMover {
  readonly #clock: Clock
  readonly #js: JetStreamClient
  readonly #topology: Topology
  readonly #publisher: Publisher
  readonly #partitions: number
  // A due message that carries a schedule's next fire goes to the schedules (see `ScheduleKeeper`).
  readonly #schedules: { due(w: Wire): Promise<void> }
  #messages: ConsumerMessages | undefined
  #loop: Promise<void> | undefined
  /** Messages moved into their partition. */
  moved = 0

  constructor(
    clock: Clock,
    js: JetStreamClient,
    topology: Topology,
    publisher: Publisher,
    partitions: number,
    schedules: { due(w: Wire): Promise<void> },
  ) {
    this.#clock = clock
    this.#schedules = schedules
    this.#js = js
    this.#topology = topology
    this.#publisher = publisher
    this.#partitions = partitions
  }

  /** Starts pulling. */
  async start(): Promise<void> {
    const consumer = await this.#js.consumers.get(this.#topology.delayed, this.#topology.delays)
    const messages = await consumer.consume({ max_messages: 256 })
    this.#messages = messages
    this.#loop = (async () => {
      for await (const jm of messages) this.#move(jm)
    })()
  }

  /** Stops pulling (messages it handed back stay in the stream for the other processes). */
  async stop(): Promise<void> {
    this.#messages?.stop()
    await this.#loop
  }

  #move(jm: JsMsg): void {
    let w: Wire
    try {
      w = decode(jm.headers, jm.data, this.#clock)
    } catch {
      jm.ack() // another publisher's message: dropped (a terminated one would stay in the stream)
      return
    }
    const now = wallNow(this.#clock)
    const wait = (w.dueAtEpochMs ?? 0) - now
    if (wait > 0) {
      jm.nak(Math.min(Math.ceil(wait), MAX_NAK_MS))
      return
    }
    if (w.headers['flowing-schedule'] !== undefined) {
      this.#schedules.due(w).then(
        () => {
          this.moved++
          jm.ack()
        },
        () => jm.nak(1000), // the server is away: try again in a second (nothing fires twice)
      )
      return
    }
    const subject = this.#topology.subject(partitionOf(w.key, w.id, this.#partitions))
    const due: Wire = { ...w, dueAtEpochMs: undefined, postedAtEpochMs: now }
    this.#publisher.publish(subject, due, `${w.id}@due`).then(
      () => {
        this.moved++
        jm.ack()
      },
      () => jm.nak(1000), // its partition is full or the server is away: try again in a second
    )
  }
}
