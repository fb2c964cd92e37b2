/**
 * The two ways the store talks to the server: one prepared statement on any pooled connection, or a
 * transaction on one connection.
 *
 * @module
 */
import type pg from 'pg'
import type { Statement } from './sql.js'

/** A pool or one of its clients. */
export type Queryable = pg.Pool | pg.PoolClient

/** Runs `statement` with `values` as a named prepared statement. */
export function run<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Queryable,
  statement: Statement,
  values: readonly unknown[],
): Promise<pg.QueryResult<R>> {
  return db.query<R>({ name: statement.name, text: statement.text, values: values as unknown[] })
}

/**
 * Runs `body` in a transaction on one connection: `COMMIT` if it resolves, `ROLLBACK` if it throws (or
 * if it returns `rollback: true`). A connection whose rollback fails is destroyed, not returned to the
 * pool.
 */
export async function transaction<T>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<{ readonly value: T; readonly rollback?: boolean }>,
): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    const { value, rollback } = await body(client)
    await client.query(rollback === true ? 'ROLLBACK' : 'COMMIT')
    return value
  } catch (error) {
    try {
      await client.query('ROLLBACK')
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))
    }
    throw error
  } finally {
    client.release(broken)
  }
}
