/**
 * The two ways the store talks to the server: one prepared statement on any pooled connection, or a
 * transaction on one connection.
 *
 * @module
 */
import type pg from 'pg'
import type { Statement } from './sql.js'

/** A pool, one of its clients, or a client of its own (the LISTEN connection). */
export type Queryable = pg.Pool | pg.ClientBase

/** Runs `statement` with `values` (as a named prepared statement if it has a name). */
export function run<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Queryable,
  statement: Statement,
  values: readonly unknown[],
): Promise<pg.QueryResult<R>> {
  const { name, text } = statement
  return db.query<R>(name === undefined ? { text, values: [...values] } : { name, text, values: [...values] })
}

/**
 * Runs `body` in a transaction on one connection (`db` itself if it is a client, else one of the
 * pool's): `COMMIT` if it resolves, `ROLLBACK` if it throws (or if it returns `rollback: true`). A
 * pooled connection whose rollback fails is destroyed, not returned to the pool.
 */
export async function transaction<T>(
  db: Queryable,
  body: (client: pg.ClientBase) => Promise<{ readonly value: T; readonly rollback?: boolean }>,
): Promise<T> {
  const pooled = isPool(db)
  const client = pooled ? await db.connect() : db
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    const { value, rollback } = await body(client)
    await client.query(rollback === true ? 'ROLLBACK' : 'COMMIT')
    return value
  } catch (error) {
    broken = await rollBack(client)
    throw error
  } finally {
    if (pooled) (client as pg.PoolClient).release(broken)
  }
}

// The rollback after a failure; what made it fail too (a lost connection), if it did.
async function rollBack(client: pg.ClientBase): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK')
    return undefined
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

// A pool counts its idle clients; a client (pooled or not) has none.
function isPool(db: Queryable): db is pg.Pool {
  return typeof (db as { idleCount?: unknown }).idleCount === 'number'
}
