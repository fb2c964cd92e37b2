/**
 * The schema at open: read its version (one cheap query when it is current), or create it, or upgrade
 * a version-1 schema in place — under an advisory lock, so processes that start at once do not race
 * through `CREATE … IF NOT EXISTS` (which is not safe against a concurrent creator on its own) or
 * upgrade it twice.
 *
 * @module
 */
import { StoreError } from '@flowing/core'
import { type Queryable, run, transaction } from './db.js'
import { SCHEMA_VERSION, type Statements, schemaDdl, upgradeDdl } from './sql.js'

// undefined_table, invalid_schema_name: nothing was created yet.
const ABSENT = new Set(['42P01', '3F000'])

// The versions this package brings to SCHEMA_VERSION: none yet, and version 1.
const UPGRADABLE = new Set<string | undefined>([undefined, '1'])

/**
 * Makes sure `schema` holds the tables of {@link SCHEMA_VERSION}, creating or upgrading them.
 * @throws StoreError (`open`) when it holds another version
 */
export async function ensureSchema(db: Queryable, sql: Statements, schema: string, store: string): Promise<void> {
  let version = await readVersion(db, sql)
  if (UPGRADABLE.has(version)) version = await migrate(db, sql, schema)
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

// Under the lock, the version is read again: a process that waited for another one's creation or
// upgrade finds it done and runs no DDL (even a no-op `ALTER TABLE … IF NOT EXISTS` locks the table,
// and would deadlock with the first process's writes). A new schema is created as version 1 and
// upgraded, a version-1 schema upgraded, a current one left alone.
async function migrate(db: Queryable, sql: Statements, schema: string): Promise<string | undefined> {
  return transaction(db, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`flowing:schema:${schema}`])
    const found = await client.query<{ meta: string | null }>('SELECT to_regclass($1)::text AS meta', [
      `${sql.schema}.meta`,
    ])
    const version = found.rows[0]?.meta == null ? undefined : await readVersion(client, sql)
    if (version === undefined) await client.query(schemaDdl(schema))
    if (UPGRADABLE.has(version)) await client.query(upgradeDdl(schema))
    return { value: await readVersion(client, sql) }
  })
}
