import { StoreError } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { postgresStore } from '../src/index.js'
import { batch, describePostgres, eventually, ids, record, useDatabase } from './fixtures.js'
import { freePort } from './server.js'

describePostgres('PostgresStore when the server goes away', () => {
  const db = useDatabase()

  describe('commit()', () => {
    for (const mode of ['fast', 'immediate'] as const) {
      it(`rejects with a StoreError of operation commit while the server is down (${mode} stop), and commits again once it is back`, async () => {
        const store = await db.open({ owner: 'A' })
        await store.commit(batch({ messages: [record('before')] }))
        await db.server.halt(mode)
        const down = store.commit(batch({ messages: [record('lost')] }))
        await expect(down).rejects.toBeInstanceOf(StoreError)
        await expect(down).rejects.toMatchObject({
          code: 'ERR_FLOWING_STORE',
          store: store.name,
          operation: 'commit',
          message: expect.stringMatching(
            /^Journal store postgres:.* failed to commit: the server refused the connection \(is it running\?\)/,
          ),
        })
        await db.server.resume()
        await store.commit(batch({ messages: [record('after')] }))
        await store.commit(batch({ removed: ['before'] }))
        await store.close()
        expect(ids((await db.open({ owner: 'A' })).recovered().messages)).toEqual(['after'])
      })
    }
  })

  describe('backgroundError', () => {
    it('shows a renewal that failed while the server was down, and clears once one succeeds', async () => {
      const store = await db.open({ owner: 'A', renewEveryMs: 20 })
      await db.server.halt('fast')
      try {
        const error = await eventually(() => store.backgroundError)
        expect(error).toMatchObject({
          name: 'StoreError',
          operation: 'lease',
          // The first renewal to fail may meet the pooled connection as the server shuts it, or a refusal after.
          message: expect.stringMatching(
            /a background renewal failed: (the server refused the connection|the server is shutting down|the connection was reset|Connection terminated)/,
          ),
        })
      } finally {
        await db.server.resume()
      }
      await eventually(() => (store.backgroundError === undefined ? true : undefined))
      expect(store.lease.lost).toBeUndefined()
      await store.commit(batch({ messages: [record('after')] }))
    })
  })

  describe('close()', () => {
    it('rejects with a StoreError of operation close when the lease cannot be released, once', async () => {
      const store = await db.open({ owner: 'A' })
      await db.server.halt('fast')
      try {
        const closing = store.close()
        await expect(closing).rejects.toMatchObject({
          operation: 'close',
          message: expect.stringContaining('the lease could not be released (it expires on its own)'),
        })
        expect(store.close()).toBe(closing)
        await expect(store.commit(batch({}))).rejects.toMatchObject({ operation: 'commit' })
      } finally {
        await db.server.resume()
      }
    })
  })

  describe('postgresStore()', () => {
    it('rejects with a StoreError of operation open when no server listens', async () => {
      const url = `postgres://flowing@127.0.0.1:${await freePort()}/nowhere`
      const opening = postgresStore({ connectionString: url })
      await expect(opening).rejects.toMatchObject({
        name: 'StoreError',
        operation: 'open',
        store: expect.stringMatching(/^postgres:127\.0\.0\.1:\d+\/nowhere#flowing\.default$/),
        message: expect.stringContaining('the server refused the connection (is it running?)'),
      })
    })

    it('says so when the database does not exist', async () => {
      const opening = postgresStore({ connectionString: db.url.replace(/flowing_test$/, 'missing') })
      await expect(opening).rejects.toMatchObject({
        operation: 'open',
        message: expect.stringMatching(/the database does not exist: database "missing" does not exist \(3D000\)/),
      })
    })

    it('says so when the role may not create the schema', async () => {
      await db.admin.query('CREATE ROLE reader LOGIN')
      const url = db.url.replace('flowing@', 'reader@')
      const opening = postgresStore({ connectionString: url, schema: 'forbidden' })
      await expect(opening).rejects.toMatchObject({
        operation: 'open',
        message: expect.stringMatching(
          /the role lacks a privilege it needs .*permission denied for database flowing_test \(42501\)/,
        ),
      })
    })
  })
})
