/**
 * The loop's side of the idempotency ledger: claims a message's key when it is posted (a duplicate is
 * refused then, or — with an async store — skipped when it would run), records `committed` / `done` /
 * `failed`, and frees the key of a message that will not run.
 *
 * @module
 */

import type { Clock } from '../contracts/clock.js'
import type { IdempotencyOptions, IdempotencyStore, LedgerEntry } from '../contracts/idempotency.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'
import { HELD, type KeyTable, type Slot } from './key-table.js'
import { MemoryIdempotencyStore, memoryTable } from './store.js'

/** A run-time duplicate found by an async store: the message is dropped (reason `duplicate`). */
export class DuplicateSkip {
  /**
   * @param entry - what the store holds for the key
   */
  constructor(readonly entry: LedgerEntry) {}
}

/** The loop's ledger use. */
export class Idempotency {
  readonly #store: IdempotencyStore
  // The table of the default store, when this ledger made it: nobody else writes to it, so its slots
  // carry the held marks (`#held` stays empty) and a post or an end is one lookup for both.
  readonly #own: KeyTable | undefined
  readonly #clock: Clock
  readonly #ttlMs: number
  readonly #reclaimFailed: boolean
  readonly #byId: boolean
  readonly #extras: PostExtras
  // Keys of messages in flight in this loop — duplicates within the process are refused synchronously
  // whatever the store — and those of them this loop has not won (an async claim not answered yet):
  // only won keys (claimed, or taken over on restore) are ever written to the store. Two sets rather
  // than a map to a flag: a message's end is then one lookup (`#held.delete`) while `#unwon` is empty.
  readonly #held = new Set<string>()
  readonly #unwon = new Set<string>()
  // Async claims not settled (or to be made again after a rejected one, `null`), by key.
  readonly #pending = new Map<string, PromiseLike<LedgerEntry | undefined> | null>()
  // Restored keys whose async claim is pending: `processing` / `committed` found then are their own.
  readonly #restored = new Set<string>()
  // In-flight keys whose message committed (`ctx.commit()`): a duplicate is told so.
  readonly #committed = new Set<string>()
  // Claims whose message ended before they answered, by key: a re-post of the key waits for them.
  readonly #orphans = new Map<string, PromiseLike<void>>()
  // During a restore: the entries the keys taken over had before (put back if the restore fails).
  readonly #previous = new Map<string, LedgerEntry>()
  readonly #onError: (error: unknown, key: string) => void

  /**
   * @param options - validated options
   * @param clock - the loop's clock (TTLs of the default store)
   * @param extras - where per-message keys and checkpoints live
   * @param onError - an async store call failed
   */
  constructor(
    options: IdempotencyOptions,
    clock: Clock,
    extras: PostExtras,
    onError: (error: unknown, key: string) => void,
  ) {
    const own = options.store === undefined ? new MemoryIdempotencyStore(options.maxKeys ?? 100_000, clock) : undefined
    this.#store = options.store ?? (own as MemoryIdempotencyStore)
    this.#own = own === undefined ? undefined : memoryTable(own)
    this.#clock = clock
    this.#ttlMs = options.ttlMs ?? 86_400_000
    this.#reclaimFailed = (options.failed ?? 'retry') === 'retry'
    this.#byId = options.dedupe === 'id'
    this.#extras = extras
    this.#onError = onError
  }

  /** The ledger (the default in-memory one unless a store was given). */
  get store(): IdempotencyStore {
    return this.#store
  }

  /** Whether a message in flight in this loop holds `key`. */
  holds(key: string): boolean {
    const own = this.#own
    return own === undefined ? this.#held.has(key) : own.isHeld(own.find(key))
  }

  /** The idempotency key of `m`, if it has one. */
  keyOf(m: Envelope): string | undefined {
    return this.#extras.idempotencyKeyOf(m) ?? (this.#byId ? m.id : undefined)
  }

  /**
   * Claims the key of a message being admitted.
   * @returns undefined when claimed (or asked of an async store); else what holds it — in flight here
   * (`processing`, `committed`) or in the ledger — and nothing changed
   * @param now - the clock's reading at the post, if the caller has one (the default store's TTL)
   * @param m - the message, if the caller has it (its slot in the own table is kept beside it)
   * @throws what the store throws
   */
  claim(key: string, now?: number, m?: Envelope): string | undefined {
    const own = this.#own
    if (own !== undefined) {
      const found = own.claim(key, this.#ttlMs, this.#reclaimFailed, now ?? this.#clock.now(), true)
      if (found === undefined && m !== undefined) this.#extras.keepSlot(m, own.lastClaimed)
      return found === undefined ? undefined : found === HELD ? this.#heldState(key) : found.state
    }
    if (this.#held.has(key)) return this.#heldState(key)
    const orphan = this.#orphans.size === 0 ? undefined : this.#orphans.get(key)
    if (orphan !== undefined) {
      // An earlier message of the key ended before its claim answered: claim after that settles.
      this.#pending.set(
        key,
        orphan.then(() => this.#store.claim(key, this.#ttlMs, this.#reclaimFailed)),
      )
      this.#hold(key, false)
      return undefined
    }
    const found = this.#store.claim(key, this.#ttlMs, this.#reclaimFailed)
    if (isThenable(found)) {
      this.#pending.set(key, found)
      this.#hold(key, false)
    } else if (found !== undefined) return found.state
    else this.#held.add(key)
    return undefined
  }

  /**
   * The key of a message being restored: it takes over a `processing` or `committed` entry (left by
   * the loop that handed it back), but a key found `done` — or `failed` under the `duplicate` policy —
   * means the message already ran to an end since: it is skipped. With an async store the answer
   * comes before its first attempt (a skipped one is dropped as a duplicate then).
   * @returns whether the message may be re-admitted
   */
  restore(key: string, checkpoint: unknown): boolean {
    const found = this.#store.claim(key, this.#ttlMs, this.#reclaimFailed)
    if (isThenable(found)) {
      this.#pending.set(key, found)
      this.#restored.add(key)
      this.#hold(key, false)
    } else if (found !== undefined && !isOwnLeftover(found)) return false
    else {
      if (found !== undefined) this.#previous.set(key, found)
      this.#take(key, checkpoint)
    }
    return true
  }

  /** The restore went through: nothing will be undone. */
  restored(): void {
    this.#previous.clear()
  }

  /**
   * Before an attempt runs: waits for an async claim when one is pending. Returns undefined when there
   * is nothing to wait for; else what the claim found (undefined: won).
   */
  awaitClaim(m: Envelope): PromiseLike<LedgerEntry | undefined> | undefined {
    if (this.#pending.size === 0) return undefined
    const key = this.keyOf(m)
    if (key === undefined || !this.#pending.has(key)) return undefined
    let claim = this.#pending.get(key)
    if (claim === null || claim === undefined) {
      const again = this.#store.claim(key, this.#ttlMs, this.#reclaimFailed) // the previous one failed
      claim = isThenable(again) ? again : Promise.resolve(again)
      this.#pending.set(key, claim)
    }
    const asked = claim
    return asked.then(
      (entry) => this.#answered(m, key, asked, entry),
      (error: unknown) => {
        if (this.#pending.get(key) === asked) this.#pending.set(key, null) // claim again on the next attempt
        throw error
      },
    )
  }

  // An async claim answered while its message is in flight: won, a leftover of a restored message
  // (taken over), or held by someone else — a duplicate for this attempt and every later one.
  #answered(m: Envelope, key: string, asked: PromiseLike<LedgerEntry | undefined>, entry: LedgerEntry | undefined) {
    if (this.#pending.get(key) !== asked) return entry // the message ended first (see #forget)
    const restored = this.#restored.delete(key)
    if (entry !== undefined && !(restored && isOwnLeftover(entry))) {
      this.#pending.set(key, Promise.resolve(entry)) // later attempts see the same answer
      return entry
    }
    this.#pending.delete(key)
    if (entry === undefined)
      this.#hold(key, true) // won: the store holds it as `processing`
    else this.#take(key, this.#extras.checkpointOf(m))
    return undefined
  }

  /** `ctx.commit()`: the side effect is done; the ledger says `committed` until the message ends. */
  committed(m: Envelope, checkpoint: unknown): void {
    const key = this.keyOf(m)
    if (key === undefined || !this.holds(key)) return
    this.#committed.add(key)
    if (this.#won(key)) this.#call(key, () => this.#store.set(key, { state: 'committed', checkpoint }, this.#ttlMs))
  }

  /**
   * The message ended: `done`, `failed`, or `released` (it will not run here: cancelled, dropped).
   * @param now - the clock's reading at the end, if the caller has one (the default store's TTL)
   */
  ended(m: Envelope, how: 'done' | 'failed' | 'released', now?: number): void {
    const key = this.keyOf(m)
    if (key === undefined) return
    const own = this.#own
    if (own !== undefined) {
      const slot = own.find(key, this.#extras.slotOf(m))
      if (own.isHeld(slot)) this.#endOwn(m, own, key, slot, how, now)
      return
    }
    if (!this.#held.delete(key)) return
    const won = this.#unwon.size === 0 || !this.#unwon.delete(key)
    this.#let(key, true)
    if (!won) return // it never won its claim: the entry is someone else's
    if (how === 'released') this.#call(key, () => this.#store.release(key))
    else {
      const entry = this.#endEntry(m, how, false)
      this.#call(key, () => this.#store.set(key, entry, this.#ttlMs))
    }
  }

  // `ended` for a key held in the own table: its slot at hand, the caller's clock reading if it had one.
  #endOwn(m: Envelope, own: KeyTable, key: string, slot: Slot, how: 'done' | 'failed' | 'released', now?: number) {
    own.hold(slot, false)
    this.#let(key, true)
    if (how === 'released') own.drop(slot)
    else own.update(slot, this.#endEntry(m, how, true), (now ?? this.#clock.now()) + this.#ttlMs)
  }

  // The entry of a message that ended (with its checkpoint, if it committed); `shared` for the own
  // table, which never changes an entry (a given store gets an object of its own).
  #endEntry(m: Envelope, how: 'done' | 'failed', shared: boolean): LedgerEntry {
    const checkpoint = this.#extras.checkpointOf(m)
    if (checkpoint !== undefined) return { state: how, checkpoint }
    return shared ? ENDED[how] : { state: how }
  }

  // What a duplicate of a key held here is told.
  #heldState(key: string): string {
    return this.#committed.has(key) ? 'committed' : 'processing'
  }

  /** Handed back in a snapshot: the key stays held in the ledger (restore takes it over). */
  handedBack(m: Envelope): void {
    const key = this.keyOf(m)
    if (key !== undefined) this.#forget(key, false) // the key stays held: restore takes it over
  }

  // This loop holds `key` now, won or (an async claim not answered yet) not. In the own table (always
  // won), after the store write that made the key's slot.
  #hold(key: string, won: boolean): void {
    const own = this.#own
    if (own !== undefined) {
      own.hold(own.find(key), true)
      return
    }
    this.#held.add(key)
    if (!won) this.#unwon.add(key)
    else if (this.#unwon.size > 0) this.#unwon.delete(key)
  }

  // Whether this loop holds `key` and won it.
  #won(key: string): boolean {
    return this.holds(key) && !(this.#unwon.size > 0 && this.#unwon.has(key))
  }

  // The key leaves this loop (see #let).
  #forget(key: string, releaseOrphan: boolean): void {
    this.#own?.hold(this.#own.find(key), false)
    this.#held.delete(key)
    if (this.#unwon.size > 0) this.#unwon.delete(key)
    this.#let(key, releaseOrphan)
  }

  // What else the loop kept of a key leaving it (no longer in `#held` / `#unwon`). With
  // `releaseOrphan`, a claim still pending is released when it answers won (or, for a restored
  // message, with its own leftover): nobody needs it any more.
  #let(key: string, releaseOrphan: boolean): void {
    if (this.#committed.size > 0) this.#committed.delete(key)
    const restored = this.#restored.size > 0 && this.#restored.delete(key)
    if (this.#pending.size === 0) return
    const claim = this.#pending.get(key)
    if (claim === undefined) return
    this.#pending.delete(key)
    if (claim === null || !releaseOrphan) return
    const settled: PromiseLike<void> = claim
      .then(
        (entry) => (entry === undefined || (restored && isOwnLeftover(entry)) ? this.#release(key) : undefined),
        () => {},
      )
      .then(() => {
        if (this.#orphans.get(key) === settled) this.#orphans.delete(key)
      })
    this.#orphans.set(key, settled)
  }

  #release(key: string): PromiseLike<void> | undefined {
    try {
      const result = this.#store.release(key)
      if (isThenable(result)) return result.then(undefined, (error: unknown) => this.#onError(error, key))
    } catch (error) {
      this.#onError(error, key)
    }
    return undefined
  }

  unrestore(key: string): void {
    const won = this.#won(key)
    this.#forget(key, true)
    const previous = this.#previous.get(key)
    this.#previous.delete(key)
    if (previous !== undefined) this.#call(key, () => this.#store.set(key, previous, this.#ttlMs))
    else if (won) this.#release(key)
  }

  // This loop holds `key` now; a checkpoint carried over makes it `committed`.
  #take(key: string, checkpoint: unknown): void {
    const entry: LedgerEntry = checkpoint === undefined ? { state: 'processing' } : { state: 'committed', checkpoint }
    this.#call(key, () => this.#store.set(key, entry, this.#ttlMs))
    this.#hold(key, true)
  }

  #call(key: string, fn: () => void | PromiseLike<void>): void {
    try {
      const result = fn()
      if (isThenable(result)) result.then(undefined, (error: unknown) => this.#onError(error, key))
    } catch (error) {
      this.#onError(error, key)
    }
  }
}

// The own table's entries of a message that ended without a checkpoint.
const ENDED: Readonly<Record<'done' | 'failed', LedgerEntry>> = {
  done: Object.freeze({ state: 'done' }),
  failed: Object.freeze({ state: 'failed' }),
}

// A `processing` or `committed` entry found on restore was left by the loop that handed the message back.
function isOwnLeftover(entry: LedgerEntry): boolean {
  return entry.state === 'processing' || entry.state === 'committed'
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}

/**
 * The loop's ledger, made when first needed: with the `idempotency` option, or by the first post that
 * carries an idempotency key (loops that never use keys pay one `undefined` check per message).
 */
export class LedgerSlot {
  /** The ledger, once made. */
  current: Idempotency | undefined
  readonly #make: () => Idempotency

  /**
   * @param make - builds the ledger
   * @param eager - build it now (the `idempotency` option was given)
   */
  constructor(make: () => Idempotency, eager: boolean) {
    this.#make = make
    this.current = eager ? make() : undefined
  }

  /** The ledger, made if needed. */
  ensure(): Idempotency {
    this.current ??= this.#make()
    return this.current
  }
}
