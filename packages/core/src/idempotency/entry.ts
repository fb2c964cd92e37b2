/**
 * What the idempotency ledger holds for a key (a leaf: the store and its table both use it).
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
