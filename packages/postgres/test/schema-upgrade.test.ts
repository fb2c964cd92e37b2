/**
 * A database made by version 1 of the schema (the DDL that version ran, rows written as it wrote
 * them) is upgraded in place when a store of this version opens it: once, under the lock, however
 * many stores open it at once, and nothing it held is lost.
 */
import { describe, expect, it } from 'vitest'
import { createEnqueuer } from '../src/index.js'
import { schemaDdl } from '../src/internal/sql.js'
import { appClient, inTransaction } from './enqueue-fixtures.js'
import { describePostgres, record, useDatabase } from './fixtures.js'

describePostgres('schema version 1', () => {
  const db = useDatabase()

  describe('opened by this version', () => {
    it('is upgraded to version 2 in place, by one of several stores opening at once, keeping its rows', async () => {
      const schema = 'legacy'
      await db.admin.query(schemaDdl(schema))
      // What a version-1 store left: a message of a closed store (no lease), a finished key.
      const kept = record('m1', { idempotencyKey: 'k-old' })
      await db.admin.query(
        `INSERT INTO ${schema}.messages (journal, id, owner, body) VALUES ('orders', 'm1', 'gone', $1)`,
        [JSON.stringify(kept)],
      )
      await db.admin.query(
        `INSERT INTO ${schema}.keys (journal, key, expires_at, body) VALUES ('orders', 'k-done', 'infinity', $1)`,
        [JSON.stringify({ key: 'k-done', entry: { state: 'done' }, expiresAtEpochMs: 8.64e15 })],
      )
      expect((await db.admin.query(`SELECT value FROM ${schema}.meta`)).rows).toEqual([{ value: '1' }])

      const stores = await Promise.all(['a', 'b', 'c'].map((owner) => db.open({ schema, journal: 'orders', owner })))
      expect((await db.admin.query(`SELECT value FROM ${schema}.meta`)).rows).toEqual([{ value: '2' }])
      const recovered = stores.flatMap((s) => s.recovered().messages)
      expect(recovered).toEqual([kept]) // taken over by exactly one of them
      const journals = await db.admin.query(`SELECT journal FROM ${schema}.journals`)
      expect(journals.rows).toEqual([{ journal: 'orders' }])
      const column = await db.admin.query(`SELECT idem_key FROM ${schema}.messages WHERE id = 'm1'`)
      expect(column.rows).toEqual([{ idem_key: null }]) // rows from before the upgrade are not in the index

      const client = await appClient(db)
      try {
        const enqueuer = createEnqueuer<{ job: null }>({ schema, journal: 'orders', types: ['job'] })
        await inTransaction(client, () => enqueuer.enqueue(client, 'job', null, { idempotencyKey: 'k-new' }))
        await client.query('BEGIN')
        await expect(enqueuer.enqueue(client, 'job', null, { idempotencyKey: 'k-done' })).rejects.toMatchObject({
          name: 'DuplicateMessageError',
          ledgerState: 'done',
        })
        await client.query('COMMIT')
      } finally {
        await client.end()
      }
    })

    it('is refused by an enqueuer until a store of this version has opened it', async () => {
      const schema = 'untouched'
      await db.admin.query(schemaDdl(schema))
      const client = await appClient(db)
      try {
        const enqueuer = createEnqueuer<{ job: null }>({ schema, journal: 'orders', types: ['job'] })
        await client.query('BEGIN')
        await expect(enqueuer.enqueue(client, 'job', null)).rejects.toMatchObject({
          name: 'InvalidArgumentError',
          argument: 'options.schema',
          message: expect.stringContaining('it has version 1'),
        })
        await client.query('COMMIT')
      } finally {
        await client.end()
      }
    })
  })
})
