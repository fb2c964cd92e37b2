/**
 * The table behind the in-memory ledger: one slot a key, found through one `Map` (one lookup a call),
 * holding its entry and expiry time, bounded — past `maxKeys` the least recently used finished key is
 * forgotten, in O(1) — with times given by the caller (one clock reading serves a whole call).
 *
 * The slots are columns (typed arrays and two plain arrays) indexed by a slot number, and the
 * finished keys' recency list is linked through them: a key costs no object of its own, so 100,000
 * keys held are a few arrays for the collector, not 100,000 objects it must trace and move.
 *
 * @module
 */

import type { LedgerEntry } from '../contracts/idempotency.js'

/** The entry a fresh claim writes (shared: entries are never changed in place). */
export const PROCESSING: LedgerEntry = Object.freeze({ state: 'processing' })

/**
 * What {@link KeyTable.claim} answers, with `hold`, for a key the loop holds itself — whatever its
 * entry or expiry says (the loop knows the message is in flight; it answers what state it is in).
 */
export const HELD: LedgerEntry = Object.freeze({ state: 'processing' })

/** A slot number (`NONE`: no slot). */
export type Slot = number

/** No slot (a key not in the table, the end of a list). */
export const NONE: Slot = -1

const FIRST_CAPACITY = 1024

/** Whether an entry is finished (`done`, `failed`): only those are linked by recency, and evicted. */
export function isFinished(entry: LedgerEntry): boolean {
  return entry.state === 'done' || entry.state === 'failed'
}

/** The bounded table (see the module comment). */
export class KeyTable {
  /** The bound on keys held (in flight or finished); only finished ones are ever evicted. */
  readonly maxKeys: number
  // Every key held, to its slot.
  readonly #slots = new Map<string, Slot>()
  // The columns, by slot: its key, entry, expiry, whether the owner holds it, and its neighbours in
  // the recency list of finished keys (toward the oldest, toward the newest; a free slot's `newer`
  // links the free list).
  #keys: (string | undefined)[] = []
  #entries: (LedgerEntry | undefined)[] = []
  #expiresAt = new Float64Array(FIRST_CAPACITY)
  #held = new Uint8Array(FIRST_CAPACITY)
  #older = new Int32Array(FIRST_CAPACITY)
  #newer = new Int32Array(FIRST_CAPACITY)
  #used = 0
  #free: Slot = NONE
  #oldest: Slot = NONE
  #newest: Slot = NONE
  #evicted = 0
  #lastClaimed: Slot = NONE

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

  /** The slot the last successful {@link KeyTable.claim} wrote. */
  get lastClaimed(): Slot {
    return this.#lastClaimed
  }

  /**
   * The slot of `key`, live or expired, untouched; {@link NONE} when it has none.
   * @param hint - where `key` was last seen (checked: it may have been freed since)
   */
  find(key: string, hint: Slot = NONE): Slot {
    return hint !== NONE && this.#keys[hint] === key ? hint : (this.#slots.get(key) ?? NONE)
  }

  /** Whether the owner holds the key of `slot` (false for {@link NONE}). */
  isHeld(slot: Slot): boolean {
    return slot !== NONE && this.#held[slot] === 1
  }

  /** Marks the key of `slot` held by the owner, or not (nothing for {@link NONE}). */
  hold(slot: Slot, held: boolean): void {
    if (slot !== NONE) this.#held[slot] = held ? 1 : 0
  }

  /** The entry of `key` live at `now` (touched), if any; an expired one is dropped. */
  get(key: string, now: number): LedgerEntry | undefined {
    const slot = this.find(key)
    if (slot === NONE) return undefined
    if ((this.#expiresAt[slot] as number) <= now) {
      this.drop(slot)
      return undefined
    }
    const entry = this.#entries[slot] as LedgerEntry
    if (isFinished(entry)) this.#touch(slot)
    return entry
  }

  /**
   * Claims `key` as `processing` until `now + ttlMs` unless a live entry blocks it (touched, and
   * returned); a `failed` one is claimed again when `reclaimFailed`. With `hold`, a slot the owner
   * holds answers {@link HELD} and a claimed one is marked held.
   */
  claim(key: string, ttlMs: number, reclaimFailed: boolean, now: number, hold: boolean): LedgerEntry | undefined {
    const slot = this.find(key)
    if (slot === NONE) {
      const added = this.#add(key, PROCESSING, now + ttlMs)
      this.#held[added] = hold ? 1 : 0
      this.#lastClaimed = added
      return undefined
    }
    if (hold && this.#held[slot] === 1) return HELD
    const found = this.#entries[slot] as LedgerEntry
    if ((this.#expiresAt[slot] as number) > now && !(found.state === 'failed' && reclaimFailed)) {
      if (isFinished(found)) this.#touch(slot)
      return found
    }
    this.update(slot, PROCESSING, now + ttlMs) // expired, or a failed key claimed again
    this.#held[slot] = hold ? 1 : 0
    this.#lastClaimed = slot
    return undefined
  }

  /** Writes the entry of `key` (a finished one becomes the most recently used). */
  set(key: string, entry: LedgerEntry, expiresAt: number): void {
    const slot = this.find(key)
    if (slot === NONE) this.#add(key, entry, expiresAt)
    else this.update(slot, entry, expiresAt)
  }

  /** {@link KeyTable.set} for a slot at hand. */
  update(slot: Slot, entry: LedgerEntry, expiresAt: number): void {
    if (isFinished(this.#entries[slot] as LedgerEntry)) this.#unlink(slot)
    this.#entries[slot] = entry
    this.#expiresAt[slot] = expiresAt
    if (isFinished(entry)) this.#append(slot)
    this.#bound()
  }

  /** Forgets `key`. */
  release(key: string): void {
    const slot = this.find(key)
    if (slot !== NONE) this.drop(slot)
  }

  /** Forgets the key of a slot at hand; the slot is free for another key. */
  drop(slot: Slot): void {
    this.#slots.delete(this.#keys[slot] as string)
    if (isFinished(this.#entries[slot] as LedgerEntry)) this.#unlink(slot)
    this.#keys[slot] = undefined
    this.#entries[slot] = undefined
    this.#held[slot] = 0
    this.#newer[slot] = this.#free
    this.#free = slot
  }

  #add(key: string, entry: LedgerEntry, expiresAt: number): Slot {
    const slot = this.#take()
    this.#slots.set(key, slot)
    this.#keys[slot] = key
    this.#entries[slot] = entry
    this.#expiresAt[slot] = expiresAt
    if (isFinished(entry)) this.#append(slot)
    this.#bound()
    return slot
  }

  // A free slot: one given back, else the next unused one (the columns double when full).
  #take(): Slot {
    const free = this.#free
    if (free !== NONE) {
      this.#free = this.#newer[free] as Slot
      return free
    }
    if (this.#used === this.#expiresAt.length) this.#grow()
    return this.#used++
  }

  #grow(): void {
    const capacity = this.#expiresAt.length * 2
    this.#expiresAt = grown(new Float64Array(capacity), this.#expiresAt)
    this.#held = grown(new Uint8Array(capacity), this.#held)
    this.#older = grown(new Int32Array(capacity), this.#older)
    this.#newer = grown(new Int32Array(capacity), this.#newer)
  }

  // Links `slot` as the newest finished key.
  #append(slot: Slot): void {
    const newest = this.#newest
    this.#older[slot] = newest
    this.#newer[slot] = NONE
    if (newest === NONE) this.#oldest = slot
    else this.#newer[newest] = slot
    this.#newest = slot
  }

  #unlink(slot: Slot): void {
    const older = this.#older[slot] as Slot
    const newer = this.#newer[slot] as Slot
    if (older === NONE) this.#oldest = newer
    else this.#newer[older] = newer
    if (newer === NONE) this.#newest = older
    else this.#older[newer] = older
  }

  // A finished key read or claimed becomes the most recently used.
  #touch(slot: Slot): void {
    if (slot === this.#newest) return
    this.#unlink(slot)
    this.#append(slot)
  }

  // Forgets the least recently used finished key past the bound (an in-flight one, forgotten, would
  // let its duplicate in): one a write, as keys are added one at a time.
  #bound(): void {
    if (this.#slots.size <= this.maxKeys) return
    const oldest = this.#oldest
    if (oldest === NONE) return
    this.drop(oldest)
    this.#evicted++
  }
}

// `into` (larger) with `from` copied to its start.
function grown<A extends Float64Array | Uint8Array | Int32Array>(into: A, from: A): A {
  into.set(from)
  return into
}
