/**
 * Pruning the journal's expired idempotency keys: at open, and then at most once a minute (one bounded
 * DELETE on an index), by the store's wall clock.
 *
 * @module
 */
import type pg from 'pg'
import { run } from './db.js'
import type { Statement } from './sql.js'

// Expired keys are deleted at open and then at most this often.
const PRUNE_EVERY_MS = 60_000

/** The pruning of one store's journal. */
export class KeyPruner {
  readonly #pool: pg.Pool
  readonly #statement: Statement
  readonly #journal: string
  readonly #wallNow: () => number
  #last: number

  /** For a store just opened (which pruned at open). */
  constructor(pool: pg.Pool, statement: Statement, journal: string, wallNow: () => number) {
    this.#pool = pool
    this.#statement = statement
    this.#journal = journal
    this.#wallNow = wallNow
    this.#last = wallNow()
  }

  /** Deletes the expired keys if the last pruning was a minute ago or more. */
  async due(): Promise<void> {
    const now = this.#wallNow()
    if (now - this.#last < PRUNE_EVERY_MS) return
    await run(this.#pool, this.#statement, [this.#journal, now])
    this.#last = now
  }
}
