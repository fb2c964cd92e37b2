/**
 * The idempotency contracts: what the ledger holds for a key, where keys live, and the options.
 *
 * @module
 */

/**
 * A key's state: `processing` (accepted, not finished), `committed` (its side effect is done but the
 * message is not finished — "succeeded but not acknowledged"), `done`, `failed` (dead-lettered).
 *
 * @group Idempotency
 */
export type LedgerState = 'processing' | 'committed' | 'done' | 'failed'

/**
 * What the ledger holds for a key.
 *
 * @group Idempotency
 */
export interface LedgerEntry {
  /** The key's state. */
  readonly state: LedgerState
  /** The value given to `ctx.commit()`, for `committed` (and kept for `done`). */
  readonly checkpoint?: unknown
}

/**
 * Options of the `idempotency` loop option.
 *
 * @group Idempotency
 */
export interface IdempotencyOptions {
  /**
   * The ledger. The default is in memory (answers duplicates at post time); a store whose `claim`
   * returns a promise is asked before the first attempt runs, and a duplicate is then dropped
   * (reason `duplicate`) instead of refused.
   * @defaultValue a `MemoryIdempotencyStore` of `maxKeys`
   */
  readonly store?: IdempotencyStore
  /**
   * How long a key is remembered after its message finished (ms).
   * @defaultValue 86_400_000 (24 h)
   */
  readonly ttlMs?: number
  /**
   * Keys the default store holds, in flight or finished; past it the least recently used finished key is forgotten.
   * @defaultValue 100_000
   */
  readonly maxKeys?: number
  /**
   * What a post whose key is `failed` (dead-lettered) gets: `retry` runs it again, `duplicate` refuses it.
   * @defaultValue 'retry'
   */
  readonly failed?: 'retry' | 'duplicate'
  /**
   * `id`: a message without an `idempotencyKey` uses its id (restored messages keep their original id,
   * so a message already done before the restart is not run again).
   * @defaultValue 'none'
   */
  readonly dedupe?: 'id' | 'none'
}

/**
 * Where idempotency keys live. The default is {@link MemoryIdempotencyStore}; implement this for Redis
 * or SQL so keys survive restarts and are shared between processes. Every method may return a promise.
 *
 * @example
 * ```ts no-run
 * // Redis: one key per idempotency key, a TTL, SET NX for the claim.
 * const store: IdempotencyStore = {
 *   async claim(key, ttlMs, reclaimFailed) {
 *     const taken = await redis.set(`idem:${key}`, '{"state":"processing"}', 'PX', ttlMs, 'NX')
 *     if (taken === 'OK') return undefined
 *     const entry = JSON.parse((await redis.get(`idem:${key}`)) ?? '{"state":"processing"}')
 *     if (entry.state === 'failed' && reclaimFailed) {
 *       await redis.set(`idem:${key}`, '{"state":"processing"}', 'PX', ttlMs)
 *       return undefined
 *     }
 *     return entry
 *   },
 *   async set(key, entry, ttlMs) {
 *     await redis.set(`idem:${key}`, JSON.stringify(entry), 'PX', ttlMs)
 *   },
 *   async release(key) {
 *     await redis.del(`idem:${key}`)
 *   },
 * }
 * ```
 *
 * @group Idempotency
 */
export interface IdempotencyStore {
  /**
   * Claims `key` as `processing` unless it is held: returns `undefined` when the claim succeeded, or
   * the entry that blocks it. A `failed` entry is re-claimed when `reclaimFailed` is true.
   */
  claim(
    key: string,
    ttlMs: number,
    reclaimFailed: boolean,
  ): LedgerEntry | undefined | PromiseLike<LedgerEntry | undefined>
  /** Records the new state of a key this loop holds (`committed`, `done`, `failed`, or `processing` on restore). */
  set(key: string, entry: LedgerEntry, ttlMs: number): void | PromiseLike<void>
  /**
   * Frees a key this loop claimed whose message will not run (cancelled, dropped, refused when the
   * queue was full). Keys handed back in a snapshot stay held: the restoring loop takes them over.
   */
  release(key: string): void | PromiseLike<void>
}
