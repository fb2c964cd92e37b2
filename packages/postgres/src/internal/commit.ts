/**
 * Sending the commit statement, and sending it again when that is safe.
 *
 * @module
 */
import type pg from 'pg'
import { run } from './db.js'
import { isConnectionLoss, isIdempotencyConflict, storeFailure } from './failure.js'
import type { Statement } from './sql.js'

// How many times a commit is sent when it meets idempotency keys being written elsewhere.
const MAX_SENDS = 4

/**
 * Sends the commit statement; returns whether the lease was held (1) or not. Sent a second time if the
 * connection was lost (a pooled connection the server dropped): a batch applied twice leaves the rows
 * as applied once (upserts of the same bodies, deletes of gone rows, the lease extended again), so the
 * retry is safe even if the first one got through. Sent again too (a few times) when it met an
 * idempotency key another transaction was writing: it wrote nothing, and the next one sees that row.
 *
 * @throws StoreError (`commit`) naming `store` when the server fails it
 */
export async function sendCommit(
  pool: pg.Pool,
  commit: Statement,
  values: readonly unknown[],
  store: string,
): Promise<number | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await run<{ held: number }>(pool, commit, values)).rows[0]?.held
    } catch (error) {
      const again = attempt === 1 && isConnectionLoss(error)
      if (!(again || (attempt < MAX_SENDS && isIdempotencyConflict(error)))) throw storeFailure(store, 'commit', error)
    }
  }
}
