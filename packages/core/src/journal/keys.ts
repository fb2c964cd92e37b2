/**
 * The durable idempotency ledger: the default in-memory ledger, whose finished keys (`done`, `failed`)
 * are also journaled — so a duplicate posted after a crash still runs nothing. Keys in flight need no
 * rows of their own: they travel in their messages' records, as in a shutdown snapshot.
 *
 * @module
 */
import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { IdempotencyStore, LedgerEntry } from '../contracts/idempotency.js'
import type { KeyRecord } from '../contracts/store.js'
import { MemoryIdempotencyStore } from '../idempotency/store.js'

/** Where the journal hears of key changes. */
export interface KeyJournal {
  key(key: string, record: KeyRecord | null): void
}

/** A {@link MemoryIdempotencyStore} whose finished keys are journaled. */
export class JournaledKeys implements IdempotencyStore {
  readonly #inner: MemoryIdempotencyStore
  readonly #journal: KeyJournal
  readonly #clock: Clock

  /**
   * @param maxKeys - the memory ledger's bound
   * @param clock - the loop's clock (TTLs, and wall-clock expiry in the journal)
   * @param journal - the loop's journal
   */
  constructor(maxKeys: number, clock: Clock, journal: KeyJournal) {
    this.#inner = new MemoryIdempotencyStore(maxKeys, clock)
    this.#clock = clock
    this.#journal = journal
  }

  /** Puts back keys a journal recovered (not journaled again). */
  load(records: readonly KeyRecord[]): void {
    const now = wallNow(this.#clock)
    for (const r of records) {
      const ttl = r.expiresAtEpochMs - now
      if (ttl > 0) this.#inner.set(r.key, r.entry, ttl)
    }
  }

  claim(key: string, ttlMs: number, reclaimFailed: boolean): LedgerEntry | undefined {
    const found = this.#inner.claim(key, ttlMs, reclaimFailed)
    // A claimed key is in flight: its finished row (an expired or re-claimed `failed` one) goes.
    if (found === undefined) this.#journal.key(key, null)
    return found
  }

  set(key: string, entry: LedgerEntry, ttlMs: number): void {
    this.#inner.set(key, entry, ttlMs)
    if (entry.state === 'done' || entry.state === 'failed') {
      this.#journal.key(key, { key, entry, expiresAtEpochMs: wallNow(this.#clock) + ttlMs })
    }
  }

  release(key: string): void {
    this.#inner.release(key)
    this.#journal.key(key, null)
  }
}
