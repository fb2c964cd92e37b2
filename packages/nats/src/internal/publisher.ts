/**
 * Publishing a Flowing message into a stream: the wire encoding, `Nats-Msg-Id` for the server's
 * duplicate window, and the client's errors turned into Flowing's typed ones — a full stream is a
 * `QueueFullError`, as a full in-process queue is.
 *
 * @module
 */
import { DelayedFullError, QueueFullError } from '@flowing/core'
import type { JetStreamClient } from '@nats-io/jetstream'
import { PublishError } from '../errors.js'
import { encode, type Wire } from './codec.js'

/** What a publish did. */
export interface Published {
  /** The stream sequence it got (or that of the message it duplicates). */
  readonly seq: number
  /** The server had this message id already (in its duplicate window): nothing new was stored. */
  readonly duplicate: boolean
}

/** The counters of publishing. */
export interface PublishCounters {
  published: number
  duplicates: number
  refused: number
}

/** Publishes into one loop's streams. */
export class Publisher {
  readonly #js: JetStreamClient
  readonly #bound: number
  readonly counters: PublishCounters = { published: 0, duplicates: 0, refused: 0 }

  /**
   * @param js - the JetStream client
   * @param bound - the work stream's `max_msgs`, for the figures of a `QueueFullError`
   */
  constructor(js: JetStreamClient, bound: number) {
    this.#js = js
    this.#bound = bound
  }

  /** Stores `w` on `subject` (message id `msgId`); throws `QueueFullError` or `PublishError`. */
  publish(subject: string, w: Wire, msgId: string): Promise<Published> {
    const bound = this.#bound
    return this.#publish(subject, w, msgId, () => {
      return new QueueFullError(w.type, { queued: bound, capacity: bound, running: 0, waitingProducers: 0 })
    })
  }

  /** Stores a delayed message; throws `DelayedFullError` (the delayed stream is full) or `PublishError`. */
  publishDelayed(subject: string, w: Wire, msgId: string, maxDelayed: number): Promise<Published> {
    return this.#publish(subject, w, msgId, () => new DelayedFullError(w.type, maxDelayed, maxDelayed))
  }

  async #publish(subject: string, w: Wire, msgId: string, full: () => Error): Promise<Published> {
    const body = encode(w)
    try {
      const ack = await this.#js.publish(subject, body, { msgID: msgId })
      if (ack.duplicate) this.counters.duplicates++
      else this.counters.published++
      return { seq: ack.seq, duplicate: ack.duplicate }
    } catch (error) {
      if (isFull(error)) {
        this.counters.refused++
        throw new QueueFullError(w.type, {
          queued: this.#bound,
          capacity: this.#bound,
          running: 0,
          waitingProducers: 0,
        })
      }
      throw new PublishError(subject, error)
    }
  }
}

// JetStream's refusals of a stream at its bounds (`discard: new`): maximum messages / bytes exceeded.
function isFull(error: unknown): boolean {
  const code = (error as { code?: unknown }).code
  return code === 10077 || code === 10047 || /maximum (messages|bytes)/i.test(String((error as Error)?.message))
}

/** A new message id: a per-process random prefix and a counter, like the in-process loop's. */
export class Ids {
  readonly #prefix: string
  #n = 0

  constructor() {
    const bytes = crypto.getRandomValues(new Uint8Array(8))
    this.#prefix = Buffer.from(bytes).toString('base64url').slice(0, 10)
  }

  /** The next id. */
  next(): string {
    return `${this.#prefix}:${(this.#n++).toString(36)}`
  }
}
