/**
 * Enqueue inside a Knex transaction: Knex hands a transaction's own `pg` connection out with
 * `trx.client.acquireConnection()` (inside a transaction it is the transaction's connection, and
 * nothing is acquired from the pool), so the message commits or rolls back with the rows Knex wrote.
 */
import knex from 'knex'
import { describe, expect, it } from 'vitest'
import { createEnqueuer } from '../src/index.js'
import { recorder, stopAll } from './enqueue-fixtures.js'
import { describePostgres, eventually, useDatabase } from './fixtures.js'

describePostgres('enqueue() with Knex', () => {
  const db = useDatabase()

  describe('in knex.transaction()', () => {
    it('runs the message of a committed transaction, and not that of one rolled back', async () => {
      const r = recorder(await db.open({ leaseMs: 60_000, renewEveryMs: 20_000 }))
      const app = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 2 } })
      const enqueuer = createEnqueuer<{ email: { to: string; n: number } }>({ journal: db.journal(), types: ['email'] })
      try {
        await app.schema.createTable('signups', (t) => t.text('email'))
        for (const [n, outcome] of [
          [1, 'rollback'],
          [2, 'commit'],
        ] as const) {
          const attempt = app.transaction(async (trx) => {
            await trx('signups').insert({ email: `user${n}@example.com` })
            await enqueuer.enqueue(await trx.client.acquireConnection(), 'email', { to: `user${n}@example.com`, n })
            if (outcome === 'rollback') throw new Error('the signup failed')
          })
          if (outcome === 'rollback') await expect(attempt).rejects.toThrow('the signup failed')
          else await attempt
        }
        await eventually(() => (r.ran.length === 1 ? true : undefined))
        expect(r.ran).toEqual([2])
        expect(await app('signups').select('email')).toEqual([{ email: 'user2@example.com' }])
      } finally {
        await app.destroy()
        await stopAll(r)
      }
    })
  })
})
