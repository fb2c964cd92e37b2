/**
 * The schema at open: read its version (one cheap query when it exists), or create it — under an
 * advisory lock, so processes that start at once do not race through `CREATE … IF NOT EXISTS` (which
 * is not safe against a concurrent creator on its own).
 *
 * @module
 */
import { StoreError } from '@flowing/core'
import { type Queryable, run, transaction } from './db.js'
import { SCHEMA_VERSION, type Statements, schemaDdl } from './sql.js'

// undefined_table, invalid_schema_name: nothing was created yet.
const ABSENT = new Set(['42P01', '3F000'])

/**
 * Makes sure `schema` holds the tables of {@link SCHEMA_VERSION}.
 * @throws StoreError (`open`) when it holds another version
 */
export async function ensureSchema(db: Queryable, sql: Statements, schema: string, store: string): Promise<void> {
  let version = await readVersion(db, sql)
  if (version === undefined) version = await create(db, sql, schema)
  if (version !== SCHEMA_VERSION) {
    throw new StoreError(
      store,
      'open',
      `schema ${sql.schema} has version ${version ?? '(none)'}, and this @flowing/postgres knows version ${SCHEMA_VERSION} only — use the package version that created it, or another schema`,
    )
  }
}

async function readVersion(db: Queryable, sql: Statements): Promise<string | undefined> {
  try {
    const result = await run<{ value: string }>(db, sql.readVersion, [])
    return result.rows[0]?.value
  } catch (error) {
    if (ABSENT.has((error as { code?: string }).code ?? '')) return undefined
    throw error
  }
}

async function create(db: Queryable, sql: Statements, schema: string): Promise<string | undefined> {
  return transaction(db, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`flowing:schema:${schema}`])
    await client.query(schemaDdl(schema))
    return { value: await readVersion(client, sql) }
  })
}
