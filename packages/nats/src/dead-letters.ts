/**
 * Dead letters of a distributed loop, in the stream `<name>-dead` that every process shares: a message
 * is published there, then acknowledged, so a crash between the two leaves a duplicate letter at worst,
 * never a lost one. `list` / `replay` / `purge` see the letters of every process.
 *
 * @module
 */
import { type Clock, type DeadLetter, type DeadLetterFilter, wallNow } from '@flowing/core'
import type { JetStreamManager } from '@nats-io/jetstream'
import type { Wire } from './internal/codec.js'
import type { Publisher } from './internal/publisher.js'
import type { Topology } from './internal/topology.js'

/**
 * A dead letter as the stream keeps it.
 *
 * @group Dead letters
 */
export interface StoredDeadLetter extends DeadLetter {
  /** Its sequence in the dead-letter stream. */
  readonly seq: number
}

/**
 * What {@link NatsDeadLetters.replay} did.
 *
 * @group Dead letters
 */
export interface NatsReplayReport {
  /** The ids the replayed messages got, by the letter's id. */
  readonly replayed: ReadonlyMap<string, string>
  /** Letters it could not publish back (they stay), with why. */
  readonly refused: readonly { readonly letter: StoredDeadLetter; readonly error: Error }[]
}

interface Body {
  readonly letter: DeadLetter
  readonly wire: Wire
}

const encoder = new TextEncoder()

/**
 * The dead letters of every process of one loop.
 *
 * @group Dead letters
 */
export class NatsDeadLetters {
  readonly #clock: Clock
  readonly #jsm: JetStreamManager
  readonly #topology: Topology
  readonly #publisher: Publisher

  /** @internal */
  constructor(clock: Clock, jsm: JetStreamManager, topology: Topology, publisher: Publisher) {
    this.#clock = clock
    this.#jsm = jsm
    this.#topology = topology
    this.#publisher = publisher
  }

  /** @internal Stores a letter (before its message is acknowledged). */
  async publish(letter: DeadLetter, wire: Wire): Promise<void> {
    const body: Body = { letter, wire }
    const js = this.#jsm.jetstream()
    await js.publish(this.#topology.deadSubject, encoder.encode(JSON.stringify(body)), { msgID: `${wire.id}!dead` })
  }

  /** How many letters the stream holds. */
  async count(): Promise<number> {
    return (await this.#jsm.streams.info(this.#topology.dead)).state.messages
  }

  /** The letters, oldest first, that match `filter` (every field it gives must match). */
  async list(filter?: DeadLetterFilter): Promise<StoredDeadLetter[]> {
    return (await this.#read(filter)).map((b) => b.letter)
  }

  /**
   * Publishes the letters that match `filter` back into their partitions (fresh ids and attempt
   * counts, the same key, priority, trace and idempotency key), then removes them from the stream.
   */
  async replay(filter?: DeadLetterFilter): Promise<NatsReplayReport> {
    const replayed = new Map<string, string>()
    const refused: { letter: StoredDeadLetter; error: Error }[] = []
    for (const { letter, wire } of await this.#read(filter)) {
      // A deterministic id: two replays of one letter at once (two processes) store one message.
      const id = `${letter.id}~${letter.seq}`
      const again: Wire = { ...wire, id, postedAtEpochMs: wallNow(this.#clock), dueAtEpochMs: undefined }
      try {
        await this.#publisher.publish(this.#topology.subjectOf(again), again, id)
        await this.#jsm.streams.deleteMessage(this.#topology.dead, letter.seq, false)
        replayed.set(letter.id, id)
      } catch (error) {
        refused.push({ letter, error: error as Error })
      }
    }
    return { replayed, refused }
  }

  /** Removes the letters that match `filter` (every letter without one); returns how many. */
  async purge(filter?: DeadLetterFilter): Promise<number> {
    if (filter === undefined) {
      return (await this.#jsm.streams.purge(this.#topology.dead)).purged
    }
    const found = await this.#read(filter)
    for (const { letter } of found) await this.#jsm.streams.deleteMessage(this.#topology.dead, letter.seq, false)
    return found.length
  }

  async #read(filter: DeadLetterFilter | undefined): Promise<{ letter: StoredDeadLetter; wire: Wire }[]> {
    const { state } = await this.#jsm.streams.info(this.#topology.dead)
    const out: { letter: StoredDeadLetter; wire: Wire }[] = []
    const limit = filter?.limit ?? Number.POSITIVE_INFINITY
    for (let seq = state.first_seq; seq <= state.last_seq && out.length < limit && state.messages > 0; seq++) {
      const sm = await this.#jsm.streams.getMessage(this.#topology.dead, { seq }).catch(() => null)
      if (sm === null) continue // deleted (replayed or purged one by one)
      const body = sm.json<Body>()
      const letter: StoredDeadLetter = { ...body.letter, seq }
      if (matches(letter, filter)) out.push({ letter, wire: body.wire })
    }
    return out
  }
}

function matches(letter: DeadLetter, filter: DeadLetterFilter | undefined): boolean {
  if (filter === undefined) return true
  if (filter.ids !== undefined && !filter.ids.includes(letter.id)) return false
  if (filter.type !== undefined && letter.type !== filter.type) return false
  if (filter.key !== undefined && letter.key !== filter.key) return false
  return filter.signature === undefined || letter.error.signature === filter.signature
}
