/**
 * The idempotency ledger: per idempotency key, whether its message is being processed, has committed
 * its side effect, is done or failed — so a duplicate post runs nothing.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { IdempotencyStore, LedgerEntry } from '../contracts/idempotency.js'
import { KeyTable } from './key-table.js'

let tableOf: (store: MemoryIdempotencyStore) => KeyTable

/**
 * The table behind a memory store: the loop's ledger works on the one of the store it made itself
 * (no one else can reach that store), marking in its slots the keys the loop holds.
 */
export function memoryTable(store: MemoryIdempotencyStore): KeyTable {
  return tableOf(store)
}

/**
 * The default ledger: in memory, synchronous (so duplicates are answered at post time), bounded — past
 * `maxKeys` the least recently used finished key is forgotten — with a TTL per entry. Keys of
 * messages still in flight are never evicted. Every call is O(1) (one lookup, and one more to evict).
 *
 * @group Idempotency
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  static {
    tableOf = (store) => store.#table
  }

  /** The bound on keys held (in flight or finished); only finished ones are ever evicted. */
  readonly maxKeys: number
  readonly #clock: Pick<Clock, 'now'>
  readonly #table: KeyTable

  /**
   * @param maxKeys - keys held at most (in-flight keys are never evicted, so they may exceed it)
   * @param clock - time source for TTLs (the loop's)
   */
  constructor(maxKeys: number, clock: Pick<Clock, 'now'>) {
    this.maxKeys = maxKeys
    this.#clock = clock
    this.#table = new KeyTable(maxKeys)
  }

  /** Keys held (in flight and finished). */
  get size(): number {
    return this.#table.size
  }

  /** Finished keys forgotten early by the bound (before their TTL). */
  get evicted(): number {
    return this.#table.evicted
  }

  /** The live entry of `key`, if any (touches it). */
  get(key: string): LedgerEntry | undefined {
    return this.#table.get(key, this.#clock.now())
  }

  claim(key: string, ttlMs: number, reclaimFailed: boolean): LedgerEntry | undefined {
    return this.#table.claim(key, ttlMs, reclaimFailed, this.#clock.now(), false)
  }

  set(key: string, entry: LedgerEntry, ttlMs: number): void {
    this.#table.set(key, entry, this.#clock.now() + ttlMs)
  }

  release(key: string): void {
    this.#table.release(key)
  }
}
