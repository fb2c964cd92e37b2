/**
 * The Postgres row's journal: `postgresStore` on the suite's private server, a schema of its own for
 * every run (so its size is that run's alone), and an admin pool that reads what the tables hold.
 *
 * @module
 */
import { postgresStore } from '@flowing/postgres'
import pg from 'pg'
import { counting, type JournalKind } from './journals.js'
import type { PgServer } from './servers.js'

/** The Postgres kind on `server`; `end()` closes its admin pool. */
export function postgresJournal(server: PgServer): JournalKind & { end(): Promise<void> } {
  const admin = new pg.Pool({ connectionString: server.url, max: 2 })
  admin.on('error', () => {}) // an idle connection the server drops must not end the process
  let runs = 0
  return {
    id: 'postgres',
    label: 'PostgreSQL',
    target: { msgsPerSec: 5_000 },
    end: () => admin.end(),
    async open() {
      const schema = `bench_${++runs}`
      const pgStore = await postgresStore({ connectionString: server.url, schema, journal: 'bench' })
      const { store, written } = counting(pgStore)
      // The tables' size as Postgres reports it: heap, indexes and TOAST, dead rows until vacuumed.
      let bytes: number | undefined
      const measure = async () => {
        const sql = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`
        const { rows } = await admin.query<{ bytes: string }>(sql, [schema])
        bytes = Number(rows[0]?.bytes ?? 0)
      }
      return {
        store,
        written,
        bytes: () => bytes,
        measure,
        async leftOver() {
          await measure()
          const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.messages`)
          return Number(rows[0]?.n ?? -1)
        },
        async dispose() {
          await pgStore.close()
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        },
      }
    },
  }
}
