/**
 * Takeover: the messages of every owner whose lease has expired (or who holds none — a closed store)
 * become this store's, in one transaction under the journal's advisory lock. The lock makes takeovers
 * of one journal run one at a time, and each statement starts after the previous takeover committed,
 * so no row is ever taken by two stores. The owner's own lease is renewed in the same transaction: a
 * store that lost its lease takes nothing.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { JournalRecord } from '@flowing/core'
import { type Queryable, run, transaction } from './db.js'
import type { Lease } from './lease.js'
import type { Statements } from './sql.js'

/** What one takeover did. */
export type TakeOver =
  /** The rows taken over, oldest first (by their first-journaled order). */
  | { readonly outcome: 'taken'; readonly records: readonly JournalRecord[] }
  /** Another store of the journal was taking over (only when not waiting for it). */
  | { readonly outcome: 'busy' }
  /** This store's lease is gone: nothing was taken, the lease is fenced. */
  | { readonly outcome: 'lost' }

/** The key of a journal's advisory lock (hashed by the server). */
export function lockKey(schema: string, journal: string): string {
  return `flowing:${schema}:${journal}`
}

/**
 * The channel that `enqueue()` notifies at commit and the journal's watching stores LISTEN on: an
 * identifier of at most 63 characters, the same for every process of the journal.
 */
export function channelOf(schema: string, journal: string): string {
  return `flowing_${createHash('sha256').update(`${schema}\0${journal}`).digest('hex').slice(0, 32)}`
}

/**
 * Takes over the rows of dead owners. With `wait` false, a takeover already running elsewhere makes
 * this one give up at once (`busy`: the periodic one does not queue behind another store's).
 */
export async function takeOver(
  db: Queryable,
  sql: Statements,
  lease: Lease,
  key: string,
  wait: boolean,
): Promise<TakeOver> {
  const result = await transaction<TakeOver>(db, async (client) => {
    if (wait) await run(client, sql.lockJournal, [key])
    else {
      const locked = await run<{ locked: boolean }>(client, sql.tryLockJournal, [key])
      if (locked.rows[0]?.locked !== true) return { value: { outcome: 'busy' }, rollback: true }
    }
    const renewed = await run(client, sql.renew, lease.params)
    if (renewed.rowCount !== 1) return { value: { outcome: 'lost' }, rollback: true }
    const taken = await run<{ body: JournalRecord }>(client, sql.takeOver, lease.params.slice(0, 2))
    return { value: { outcome: 'taken', records: taken.rows.map((r) => r.body) } }
  })
  if (result.outcome === 'lost') await lease.fence(db)
  return result
}
