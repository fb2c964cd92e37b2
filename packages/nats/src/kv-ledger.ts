/**
 * The idempotency ledger of processes sharing one NATS JetStream: a KV bucket whose every write is a
 * compare-and-set on the revision the writer last saw, so a process that lost a key (a frozen holder
 * whose message was redelivered elsewhere) can never overwrite the new holder's state.
 *
 * @module
 */
import { type IdempotencyStore, InvalidArgumentError, type LedgerEntry, type LedgerState } from '@flowing/core'
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream'
import { type KV, type KvEntry, Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { LedgerContendedError, LedgerEntryError, LedgerFencedError } from './errors.js'
import { checkStoreOptions, encodeKey } from './internal/kv-keys.js'

/**
 * How many create/update rounds a claim makes before a {@link LedgerContendedError}.
 *
 * @group Idempotency
 */
export const CLAIM_ATTEMPTS = 5

/**
 * Options of {@link KvIdempotencyStore.open}.
 *
 * @group Idempotency
 */
export interface KvIdempotencyStoreOptions {
  /** The KV bucket (created if missing, with history 1): letters, digits, `-` and `_`. */
  readonly bucket: string
  /**
   * How long a key lives after its last write (ms): the bucket's max age. The `ttlMs` the loop passes
   * to each call is not used — NATS KV expires whole buckets' entries by age, not keys one by one.
   * Choose it well above the longest a message may stay `processing` without a write, or its key
   * expires under it and a duplicate could run.
   */
  readonly ttlMs: number
  /** Copies of the bucket on a cluster (1–5), when it is created. @defaultValue 1 */
  readonly replicas?: number
}

// What a KV value holds: the ledger entry and the distributed message id that wrote it.
interface Stored {
  readonly state: LedgerState
  readonly checkpoint?: unknown
  readonly owner?: string
}

// A key this store holds: the revision it last wrote (the next write's compare-and-set) and the owner
// it writes.
interface Held {
  revision: number
  readonly owner: string | undefined
}

/**
 * An {@link IdempotencyStore} on a NATS KV bucket, shared by every process of a scale-out deployment,
 * with a compare-and-set fence on every write.
 *
 * @remarks
 * **The fence.** Per key it holds, the store keeps the KV revision it last wrote; every write is
 * `kv.update(key, value, revision)` (a release is a delete with `previousSeq`). If another process
 * wrote the key since, the server refuses it: the write throws {@link LedgerFencedError} and the
 * store forgets the key. Writes to one key are serialized, so the loop's fire-and-forget `committed`
 * then `done` never fence each other.
 *
 * **Owners and redeliveries.** The transport calls {@link KvIdempotencyStore.expect} with the
 * distributed message id before admitting a message with a key, and {@link KvIdempotencyStore.forget}
 * when it ended. Each claimed value records its owner. A claim that finds `processing` or `committed`
 * of the same owner is a redelivery of that message (the former holder crashed or lost its lease): the
 * store takes the key over at once — a compare-and-set that bumps the revision, so the former
 * holder's later writes are fenced off — and returns the entry, which the loop's restore path treats
 * as its own leftover. Found under another owner it answers `done` (see {@link KvIdempotencyStore.claim}).
 *
 * **Expiry** is bucket-level: the bucket's max age is `ttlMs`, counted from a key's last write.
 *
 * **Keys.** Idempotency keys may hold any character; KV keys may not, so characters outside
 * `A–Z a–z 0–9 _ - /` are written as `=XX` (UTF-8 bytes, hex): `order 42` is stored as `order=2042`.
 *
 * @example
 * ```ts no-run
 * import { connect } from '@nats-io/transport-node'
 * import { KvIdempotencyStore } from '@flowing/nats'
 *
 * const nc = await connect({ servers: '127.0.0.1:4222' })
 * const store = await KvIdempotencyStore.open(nc, { bucket: 'orders-ledger', ttlMs: 86_400_000 })
 * ```
 *
 * @group Idempotency
 */
export class KvIdempotencyStore implements IdempotencyStore {
  /** `kv:<bucket>`, for logs and errors. */
  readonly name: string
  /** The KV bucket. */
  readonly bucket: string
  readonly #kv: KV
  // Keys this store holds (won, or taken over): only these are ever written.
  readonly #held = new Map<string, Held>()
  // The owner (distributed message id) the transport is about to admit, per key.
  readonly #expected = new Map<string, string>()
  // The tail of each key's chain of store calls: one at a time per key, so each write sees the
  // revision the previous one made.
  readonly #chains = new Map<string, Promise<unknown>>()

  private constructor(kv: KV, bucket: string) {
    this.#kv = kv
    this.bucket = bucket
    this.name = `kv:${bucket}`
  }

  /**
   * Creates the bucket (history 1, max age `ttlMs`) or binds to it.
   * @param connection - a NATS connection, or a JetStream client (for its options)
   * @throws InvalidArgumentError when `bucket` or `ttlMs` is invalid, or the bucket exists with
   *   another max age
   */
  static async open(
    connection: NatsConnection | JetStreamClient,
    options: KvIdempotencyStoreOptions,
  ): Promise<KvIdempotencyStore> {
    const { bucket, ttlMs, replicas } = checkStoreOptions(options)
    const kv = await new Kvm(connection).create(bucket, { history: 1, ttl: ttlMs, replicas })
    const { ttl } = await kv.status()
    if (ttl !== ttlMs) {
      const rule = `the max age of the existing bucket \`${bucket}\` (${ttl} ms)`
      throw new InvalidArgumentError('options.ttlMs', rule, ttlMs)
    }
    return new KvIdempotencyStore(kv, bucket)
  }

  /**
   * A store on a bucket the caller opened (its own timeouts or codecs): the bucket's max age is the
   * keys' TTL, and it should keep history 1 (older revisions are never read).
   * @param kv - an open KV bucket
   */
  static async bind(kv: KV): Promise<KvIdempotencyStore> {
    return new KvIdempotencyStore(kv, (await kv.status()).bucket)
  }

  /**
   * The transport is about to admit a message of `owner` (its distributed message id) with `key`:
   * a `processing` / `committed` entry of that owner is a redelivery to take over. Synchronous.
   */
  expect(key: string, owner: string): void {
    this.#expected.set(key, owner)
  }

  /**
   * The message of `key` ended here (or left this process): its expectation goes, and — once the
   * store calls already made for the key are through — so does its revision: this store writes the
   * key no more.
   */
  forget(key: string): void {
    this.#expected.delete(key)
    if (!this.#chains.has(key)) this.#held.delete(key)
    else
      void this.#serial(key, async () => {
        this.#held.delete(key)
      })
  }

  /** Whether this store holds `key` (won or taken over, not finished): its writes are fenced on it. */
  holds(key: string): boolean {
    return this.#held.has(key)
  }

  /**
   * Claims `key` as `processing`.
   *
   * @remarks
   * Absent (or a delete / purge tombstone) → created: won, `undefined`. `done` → returned. `failed` →
   * re-claimed when `reclaimFailed`, else returned. `processing` / `committed` of the expected owner →
   * taken over (compare-and-set) and returned. `processing` / `committed` of another owner → `done`:
   * the transport admits every message through the loop's restore path, where only `done` and
   * `failed` mean "skip" and `processing` / `committed` mean "my own leftover, take it over" — that
   * other holder is alive, so the message must be skipped, not run a second time. Without an
   * expectation the entry is returned as found and nothing is taken: a plain loop's post refuses the
   * duplicate, but its `restore()` of such a key would then write one it does not hold (fenced, a
   * `ledger-error`) — restoring through this store needs {@link KvIdempotencyStore.expect}.
   *
   * @param _ttlMs - not used: expiry is the bucket's max age
   * @throws LedgerContendedError after {@link CLAIM_ATTEMPTS} lost races; what NATS throws
   */
  claim(key: string, _ttlMs: number, reclaimFailed: boolean): Promise<LedgerEntry | undefined> {
    const owner = this.#expected.get(key)
    return this.#serial(key, () => this.#claim(key, owner, reclaimFailed))
  }

  /**
   * Records the new state of a key this store holds (compare-and-set on its revision); after `done`
   * or `failed` the key is no longer held.
   * @param _ttlMs - not used: expiry is the bucket's max age
   * @throws LedgerFencedError when another process wrote the key since, or this store does not hold it
   */
  set(key: string, entry: LedgerEntry, _ttlMs: number): Promise<void> {
    return this.#serial(key, async () => {
      const held = this.#held.get(key)
      if (held === undefined) throw new LedgerFencedError(key, this.bucket, undefined)
      await this.#write(key, held, { ...toStored(entry), ...ownerOf(held.owner) })
      if (entry.state === 'done' || entry.state === 'failed') this.#held.delete(key)
    })
  }

  /**
   * Frees a key this store holds (a compare-and-set delete); a no-op for a key it does not hold.
   * @throws LedgerFencedError when another process wrote the key since
   */
  release(key: string): Promise<void> {
    return this.#serial(key, async () => {
      const held = this.#held.get(key)
      if (held === undefined) return
      this.#held.delete(key)
      try {
        await this.#kv.delete(encodeKey(key), { previousSeq: held.revision })
      } catch (error) {
        throw isCasFailure(error) ? new LedgerFencedError(key, this.bucket, held.revision, { cause: error }) : error
      }
    })
  }

  /** What the bucket holds for `key` now (read-only: no claim, no fence), e.g. a committed checkpoint. */
  async peek(key: string): Promise<LedgerEntry | undefined> {
    const found = await this.#kv.get(encodeKey(key))
    return found === null || isTombstone(found) ? undefined : toEntry(decode(found))
  }

  // The claim's create-or-inspect loop: each round reads the key afresh after a lost race.
  async #claim(key: string, owner: string | undefined, reclaimFailed: boolean): Promise<LedgerEntry | undefined> {
    const k = encodeKey(key)
    const claimed: Stored = { state: 'processing', ...ownerOf(owner) }
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const found = await this.#kv.get(k)
      if (found === null || isTombstone(found)) {
        if (await this.#take(key, owner, claimed, found?.revision)) return undefined
        continue
      }
      const stored = decode(found)
      const answer = this.#answer(stored, owner, reclaimFailed)
      if (answer !== 'take') return answer
      const kept: Stored = stored.state === 'failed' ? claimed : { ...stored, ...ownerOf(owner) }
      if (await this.#take(key, owner, kept, found.revision))
        return stored.state === 'failed' ? undefined : toEntry(stored)
    }
    throw new LedgerContendedError(key, this.bucket, CLAIM_ATTEMPTS)
  }

  // What a claim answers for an existing entry, or `take` when it takes the key (see `claim`).
  #answer(stored: Stored, owner: string | undefined, reclaimFailed: boolean): LedgerEntry | 'take' {
    switch (stored.state) {
      case 'done':
        return toEntry(stored)
      case 'failed':
        return reclaimFailed ? 'take' : toEntry(stored)
      default:
        if (owner !== undefined && stored.owner === owner) return 'take'
        return owner === undefined ? toEntry(stored) : DONE
    }
  }

  // One compare-and-set write that makes this store the key's holder: a create when there is no
  // revision (nothing there), else an update on `revision`. False when the race was lost.
  async #take(key: string, owner: string | undefined, value: Stored, revision: number | undefined): Promise<boolean> {
    const k = encodeKey(key)
    try {
      const written =
        revision === undefined
          ? await this.#kv.create(k, JSON.stringify(value))
          : await this.#kv.update(k, JSON.stringify(value), revision)
      this.#held.set(key, { revision: written, owner })
      return true
    } catch (error) {
      if (isCasFailure(error)) return false
      throw error
    }
  }

  // A fenced write of a held key: on success the key's revision moves on; on a lost race the key is forgotten.
  async #write(key: string, held: Held, value: Stored): Promise<void> {
    try {
      held.revision = await this.#kv.update(encodeKey(key), JSON.stringify(value), held.revision)
    } catch (error) {
      if (!isCasFailure(error)) throw error
      this.#held.delete(key)
      throw new LedgerFencedError(key, this.bucket, held.revision, { cause: error })
    }
  }

  // Runs `fn` after every call already made for `key` has settled (whatever its outcome). The chain
  // entry goes before the caller sees the outcome, so an idle key has none (see `forget`).
  #serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.#chains.get(key)
    const run = (before === undefined ? fn() : before.then(fn, fn)).finally(() => {
      if (this.#chains.get(key) === tail) this.#chains.delete(key)
    })
    const tail: Promise<unknown> = run.then(undefined, () => {})
    this.#chains.set(key, tail)
    return run
  }
}

// What a claim of another owner's in-flight key answers (see `claim`).
const DONE: LedgerEntry = Object.freeze({ state: 'done' })

// A JetStream refusal of an expected-last-sequence header: someone wrote the key in between.
function isCasFailure(error: unknown): boolean {
  if (!(error instanceof JetStreamApiError)) return false
  return (
    error.code === JetStreamApiCodes.StreamWrongLastSequence ||
    error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown
  )
}

function isTombstone(entry: KvEntry): boolean {
  return entry.operation === 'DEL' || entry.operation === 'PURGE'
}

function decode(entry: KvEntry): Stored {
  try {
    return entry.json<Stored>()
  } catch (error) {
    throw new LedgerEntryError(entry.key, entry.bucket, error)
  }
}

function toEntry(stored: Stored): LedgerEntry {
  return stored.checkpoint === undefined
    ? { state: stored.state }
    : { state: stored.state, checkpoint: stored.checkpoint }
}

function toStored(entry: LedgerEntry): Stored {
  return entry.checkpoint === undefined ? { state: entry.state } : { state: entry.state, checkpoint: entry.checkpoint }
}

function ownerOf(owner: string | undefined): { owner?: string } {
  return owner === undefined ? {} : { owner }
}
