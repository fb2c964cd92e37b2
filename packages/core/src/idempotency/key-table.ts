/**
 * The table behind the in-memory ledger: one slot a key in one `Map` (one lookup a call), its entry
 * and expiry time, bounded — past `maxKeys` the least recently used finished key is forgotten, in
 * O(1) — with times given by the caller (one clock reading serves a whole call).
 *
 * @module
 */

import type { LedgerEntry } from '../contracts/idempotency.js'
import { type OrderLinks, OrderList } from './order-list.js'

/** The entry a fresh claim writes (shared: entries are never changed in place). */
export const PROCESSING: LedgerEntry = Object.freeze({ state: 'processing' })

/**
 * What {@link KeyTable.claim} answers, with `hold`, for a key the loop holds itself — whatever its
 * entry or expiry says (the loop knows the message is in flight; it answers what state it is in).
 */
export const HELD: LedgerEntry = Object.freeze({ state: 'processing' })

/** A key's entry, when it expires and — a finished key's only — its place in the recency list. */
export class KeySlot implements OrderLinks<KeySlot> {
  older: KeySlot | null = null
  newer: KeySlot | null = null
  /** A message in flight in the loop that owns the table holds the key (its ledger's mark). */
  held = false

  /**
   * @param key - the idempotency key
   * @param entry - its entry
   * @param expiresAt - when it expires (clock time, ms)
   */
  constructor(
    readonly key: string,
    public entry: LedgerEntry,
    public expiresAt: number,
  ) {}
}

/** Whether an entry is finished (`done`, `failed`): only those are linked by recency, and evicted. */
export function isFinished(entry: LedgerEntry): boolean {
  return entry.state === 'done' || entry.state === 'failed'
}

/** The bounded table (see the module comment). */
export class KeyTable {
  /** The bound on keys held (in flight or finished); only finished ones are ever evicted. */
  readonly maxKeys: number
  // Every key held; the finished ones are also linked in recency order (a touched key moves to the
  // newest end), so the least recently used is at hand.
  readonly #slots = new Map<string, KeySlot>()
  readonly #finished = new OrderList<KeySlot>()
  #evicted = 0

  /**
   * @param maxKeys - keys held at most (in-flight keys are never evicted, so they may exceed it)
   */
  constructor(maxKeys: number) {
    this.maxKeys = maxKeys
  }

  /** Keys held (in flight and finished). */
  get size(): number {
    return this.#slots.size
  }

  /** Finished keys forgotten early by the bound. */
  get evicted(): number {
    return this.#evicted
  }

  /** The slot of `key`, live or expired, untouched. */
  find(key: string): KeySlot | undefined {
    return this.#slots.get(key)
  }

  /** The entry of `key` live at `now` (touched), if any; an expired one is dropped. */
  get(key: string, now: number): LedgerEntry | undefined {
    const slot = this.#slots.get(key)
    if (slot === undefined) return undefined
    if (slot.expiresAt <= now) {
      this.drop(slot)
      return undefined
    }
    if (isFinished(slot.entry)) this.#finished.touch(slot)
    return slot.entry
  }

  /**
   * Claims `key` as `processing` until `now + ttlMs` unless a live entry blocks it (touched, and
   * returned); a `failed` one is claimed again when `reclaimFailed`. With `hold`, a slot the owner
   * holds answers {@link HELD} and a claimed one is marked held.
   */
  claim(key: string, ttlMs: number, reclaimFailed: boolean, now: number, hold: boolean): LedgerEntry | undefined {
    const slot = this.#slots.get(key)
    if (slot === undefined) {
      this.#add(key, PROCESSING, now + ttlMs).held = hold
      return undefined
    }
    if (hold && slot.held) return HELD
    const found = slot.entry
    if (slot.expiresAt > now && !(found.state === 'failed' && reclaimFailed)) {
      if (isFinished(found)) this.#finished.touch(slot)
      return found
    }
    this.update(slot, PROCESSING, now + ttlMs) // expired, or a failed key claimed again
    slot.held = hold
    return undefined
  }

  /** Writes the entry of `key` (a finished one becomes the most recently used); returns its slot. */
  set(key: string, entry: LedgerEntry, expiresAt: number): KeySlot {
    const slot = this.#slots.get(key)
    if (slot === undefined) return this.#add(key, entry, expiresAt)
    this.update(slot, entry, expiresAt)
    return slot
  }

  /** {@link KeyTable.set} for a slot at hand. */
  update(slot: KeySlot, entry: LedgerEntry, expiresAt: number): void {
    if (isFinished(slot.entry)) this.#finished.remove(slot)
    slot.entry = entry
    slot.expiresAt = expiresAt
    if (isFinished(entry)) this.#finished.append(slot)
    this.#bound()
  }

  /** Forgets `key`. */
  release(key: string): void {
    const slot = this.#slots.get(key)
    if (slot !== undefined) this.drop(slot)
  }

  /** Forgets the key of a slot at hand. */
  drop(slot: KeySlot): void {
    this.#slots.delete(slot.key)
    if (isFinished(slot.entry)) this.#finished.remove(slot)
  }

  #add(key: string, entry: LedgerEntry, expiresAt: number): KeySlot {
    const slot = new KeySlot(key, entry, expiresAt)
    this.#slots.set(key, slot)
    if (isFinished(entry)) this.#finished.append(slot)
    this.#bound()
    return slot
  }

  // Forgets the least recently used finished key past the bound (an in-flight one, forgotten, would
  // let its duplicate in): one a write, as keys are added one at a time.
  #bound(): void {
    if (this.#slots.size <= this.maxKeys) return
    const oldest = this.#finished.oldest
    if (oldest === null) return
    this.drop(oldest)
    this.#evicted++
  }
}
