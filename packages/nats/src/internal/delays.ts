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
import type { Publisher } from './publisher.js'
import type { Topology } from './topology.js'

// The longest single wait the mover asks for (a longer delay is handed back several times).
const MAX_NAK_MS = 3_600_000

/**
 * What a due message may be besides a plain delayed one: a schedule's next fire (the schedules move
 * it), or one posted with a job key (moved only while its key names it).
 */
export interface DelayHooks {
  readonly schedules: { due(w: Wire): Promise<void> }
  readonly jobs: { names(jobKey: string, id: string): Promise<boolean> }
}

/** Moves due messages from the delayed stream into their partitions. */
export class DelayMover {
  readonly #clock: Clock
  readonly #js: JetStreamClient
  readonly #topology: Topology
  readonly #publisher: Publisher
  readonly #hooks: DelayHooks
  #messages: ConsumerMessages | undefined
  #loop: Promise<void> | undefined
  /** Messages moved into their partition. */
  moved = 0

  constructor(clock: Clock, js: JetStreamClient, topology: Topology, publisher: Publisher, hooks: DelayHooks) {
    this.#clock = clock
    this.#hooks = hooks
    this.#js = js
    this.#topology = topology
    this.#publisher = publisher
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
      w = decode(jm, this.#clock)
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
    // A schedule's carrier or a keyed message through its hook, a plain one into its partition.
    const moving = this.#special(w) ?? this.#publishDue(w)
    moving.then(
      () => {
        this.moved++
        jm.ack()
      },
      () => jm.nak(1000), // its partition is full or the server is away: try again in a second
    )
  }

  // A schedule's carrier, or a keyed message: moved through its hook (undefined: a plain one).
  #special(w: Wire): Promise<void> | undefined {
    if (w.headers['flowing-schedule'] !== undefined) return this.#hooks.schedules.due(w)
    const jobKey = w.headers['flowing-job-key']
    if (jobKey === undefined) return undefined
    return this.#hooks.jobs.names(jobKey, w.id).then((named) => (named ? this.#publishDue(w) : undefined))
  }

  // Publishes a due message into its partition, with a message id derived from its own.
  #publishDue(w: Wire): Promise<void> {
    const now = wallNow(this.#clock)
    const subject = this.#topology.subjectOf(w)
    const due: Wire = { ...w, dueAtEpochMs: undefined, postedAtEpochMs: now }
    return this.#publisher.publish(subject, due, `${w.id}@due`).then(() => {})
  }
}
