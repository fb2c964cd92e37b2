/**
 * One store's lease on its journal: a row `(journal, owner, token, expires_at)` whose token grows on
 * every acquisition and whose expiry is the server's `now()` plus the lease length. The lease is the
 * store's right to write: every commit checks it (owner *and* token, not expired) in the statement that
 * writes, and once a check finds it gone the store is fenced for good.
 *
 * @module
 */
import { type Queryable, run } from './db.js'
import type { Statements } from './sql.js'

/**
 * The state of a store's lease, as {@link PostgresStore.lease} shows it.
 *
 * @group Store
 */
export interface LeaseState {
  /** The owner the lease is held for. */
  readonly owner: string
  /** The fencing token of this acquisition (a later acquisition, by anyone, gets a greater one). */
  readonly token: bigint
  /**
   * Why the store may not write any more, once its lease was found expired or taken over; `undefined`
   * while it holds it.
   */
  readonly lost: string | undefined
}

/** The lease of one store; the only writer of its fenced state. */
export class Lease {
  readonly journal: string
  readonly owner: string
  readonly token: string
  readonly #ms: number
  readonly #sql: Statements
  // Why this lease is gone for good: set once, by the first check that found it gone.
  #lost: string | undefined

  private constructor(sql: Statements, journal: string, owner: string, token: string, ms: number) {
    this.#sql = sql
    this.journal = journal
    this.owner = owner
    this.token = token
    this.#ms = ms
  }

  /** Takes (or, for an owner that held one, takes again with a new token) the lease of `owner`. */
  static async acquire(db: Queryable, sql: Statements, journal: string, owner: string, ms: number): Promise<Lease> {
    const result = await run<{ token: string }>(db, sql.acquire, [journal, owner, ms])
    const token = result.rows[0]?.token
    if (token === undefined) throw new Error('the lease insert returned no token')
    return new Lease(sql, journal, owner, token, ms)
  }

  /** Its state. */
  get state(): LeaseState {
    return { owner: this.owner, token: BigInt(this.token), lost: this.#lost }
  }

  /** Why the store may not write any more, if it may not. */
  get lost(): string | undefined {
    return this.#lost
  }

  /** `$1`–`$4` of every statement that checks and extends the lease. */
  get params(): readonly [string, string, string, number] {
    return [this.journal, this.owner, this.token, this.#ms]
  }

  /** Extends the lease; false (and fenced from now on) when it was expired or taken over. */
  async renew(db: Queryable): Promise<boolean> {
    const result = await run(db, this.#sql.renew, this.params)
    if (result.rowCount === 1) return true
    await this.fence(db)
    return false
  }

  /**
   * Marks the lease lost after a check found it gone, with the reason read from its row (best effort:
   * the reason is generic if the server cannot say).
   */
  async fence(db: Queryable): Promise<void> {
    if (this.#lost !== undefined) return
    let why = 'it expired or was taken over'
    try {
      const row = await db.query<{ token: string; expired: boolean }>(
        `SELECT token::text AS token, expires_at <= now() AS expired FROM ${this.#sql.schema}.leases WHERE journal = $1 AND owner = $2`,
        [this.journal, this.owner],
      )
      why = reason(row.rows[0], this.token)
    } catch {
      // the generic reason stands
    }
    this.#lost ??= `the lease of owner "${this.owner}" (token ${this.token}) is lost: ${why}; this store writes nothing more — another process may own its messages now (restart the loop: a new store recovers what is still its own)`
  }

  /** Deletes the lease row, so its remaining messages can be taken over at once. */
  async release(db: Queryable): Promise<void> {
    await run(db, this.#sql.release, this.params.slice(0, 3))
  }
}

function reason(row: { token: string; expired: boolean } | undefined, token: string): string {
  if (row === undefined) return 'another process took its messages over after it expired'
  if (row.token !== token) return `another store took the lease again for the same owner (token ${row.token})`
  if (row.expired) return 'it expired (no renewal or commit reached the server within leaseMs)'
  return 'it expired or was taken over'
}
