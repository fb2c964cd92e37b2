import { StoreError } from '@flowing/core'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { PostgresStore, postgresStore } from '../src/index.js'
import { batch, describePostgres, eventually, ids, key, letter, record, useDatabase } from './fixtures.js'

describePostgres('PostgresStore', () => {
  const db = useDatabase()

  describe('postgresStore()', () => {
    it('creates the schema on first open and recovers nothing from a new journal', async () => {
      const store = await db.open()
      expect(store).toBeInstanceOf(PostgresStore)
      expect(store.recovered()).toEqual({ messages: [], deadLetters: [], keys: [] })
      const tables = await db.admin.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'flowing' ORDER BY table_name",
      )
      expect(tables.rows.map((r) => r.table_name)).toEqual([
        'dead_letters',
        'journals',
        'keys',
        'leases',
        'messages',
        'meta',
      ])
      const version = await db.admin.query("SELECT value FROM flowing.meta WHERE key = 'version'")
      expect(version.rows).toEqual([{ value: '2' }])
    })

    it('names the server, the database, the schema and the journal, never the password', async () => {
      const url = db.url.replace('flowing@', 'flowing:secret@')
      const store = await db.open({ connectionString: url, schema: 'named', journal: 'orders' })
      expect(store.name).toBe(`postgres:127.0.0.1:${db.server.port}/flowing_test#named.orders`)
      expect(store.journal).toBe('orders')
      expect(store.schema).toBe('named')
    })

    it('opens many stores at once on a schema that does not exist yet (the creation is locked)', async () => {
      const stores = await Promise.all(
        Array.from({ length: 8 }, (_, i) => db.open({ schema: 'racing', owner: `o${i}` })),
      )
      expect(stores.map((s) => s.recovered().messages.length)).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    })

    it('refuses a schema of another version with a StoreError of operation open', async () => {
      await (await db.open({ schema: 'future' })).close()
      await db.admin.query("UPDATE future.meta SET value = '99' WHERE key = 'version'")
      const opening = postgresStore({ connectionString: db.url, schema: 'future' })
      await expect(opening).rejects.toBeInstanceOf(StoreError)
      await expect(opening).rejects.toMatchObject({
        code: 'ERR_FLOWING_STORE',
        operation: 'open',
        message: expect.stringMatching(/schema "future" has version 99, and this @flowing\/postgres knows version 2/),
      })
    })

    it('takes a pool of yours and leaves it open at close', async () => {
      const pool = new pg.Pool({ connectionString: db.url, max: 2 })
      pool.on('error', () => {})
      const store = await postgresStore({ pool, journal: db.journal() })
      await store.commit(batch({ messages: [record('a')] }))
      await store.close()
      const rows = await pool.query('SELECT count(*)::int AS n FROM flowing.messages WHERE journal = $1', [
        db.journal(),
      ])
      expect(rows.rows).toEqual([{ n: 1 }])
      await pool.end()
    })
  })

  describe('commit()', () => {
    it('keeps every committed row for the next store of the same owner', async () => {
      const first = await db.open({ owner: 'me' })
      await first.commit(
        batch({
          messages: [record('a'), record('b', { state: 'delayed', dueAtEpochMs: 1_800_000_000_000 })],
          deadLetters: [letter('d1')],
          keys: [key('k1', Date.now() + 60_000)],
        }),
      )
      await first.close()
      const second = await db.open({ owner: 'me' })
      const contents = second.recovered()
      expect(contents.messages).toEqual([
        record('a'),
        record('b', { state: 'delayed', dueAtEpochMs: 1_800_000_000_000 }),
      ])
      expect(contents.deadLetters).toEqual([letter('d1')])
      expect(contents.keys).toEqual([key('k1', expect.any(Number) as unknown as number)])
    })

    it('keeps a replaced row at its first-journaled place and removes finished ones', async () => {
      const store = await db.open({ owner: 'me' })
      await store.commit(batch({ messages: [record('a'), record('b'), record('c')] }))
      await store.commit(
        batch({ messages: [record('a', { state: 'retry-scheduled', hops: 2 }), record('d')], removed: ['b'] }),
      )
      await store.close()
      const reopened = await db.open({ owner: 'me' })
      expect(ids(reopened.recovered().messages)).toEqual(['a', 'c', 'd'])
      expect(reopened.recovered().messages[0]).toMatchObject({ state: 'retry-scheduled', hops: 2 })
    })

    it('keeps payloads, checkpoints and keys that UTF-8 text alone cannot hold', async () => {
      const strange = 'nul\u0000 lone\ud800 emoji😀 quote" back\\slash'
      const store = await db.open({ owner: 'me' })
      const r = record('s', { payloadJson: JSON.stringify(strange), checkpoint: { strange }, idempotencyKey: strange })
      await store.commit(
        batch({ messages: [r], keys: [key(strange, Date.now() + 60_000), key('\\plain', Date.now() + 60_000)] }),
      )
      await store.close()
      const reopened = await db.open({ owner: 'me' })
      expect(reopened.recovered().messages).toEqual([r])
      expect(
        reopened
          .recovered()
          .keys.map((k) => k.key)
          .sort(),
      ).toEqual(['\\plain', strange].sort())
      await reopened.commit(batch({ keysRemoved: [strange] }))
      await reopened.close()
      expect((await db.open({ owner: 'me' })).recovered().keys.map((k) => k.key)).toEqual(['\\plain'])
    })

    it('does not return expired keys and deletes them at the next open', async () => {
      let now = 1_700_000_000_000
      const store = await db.open({ owner: 'me', wallNow: () => now })
      await store.commit(batch({ keys: [key('old', now + 1_000), key('young', now + 100_000)] }))
      await store.close()
      now += 10_000
      const reopened = await db.open({ owner: 'me', wallNow: () => now })
      expect(reopened.recovered().keys.map((k) => k.key)).toEqual(['young'])
      const rows = await db.admin.query('SELECT key FROM flowing.keys WHERE journal = $1', [db.journal()])
      expect(rows.rows).toEqual([{ key: 'young' }])
    })

    it('deletes expired keys now and then while running, by its wall clock', async () => {
      let now = 1_700_000_000_000
      const store = await db.open({ owner: 'me', wallNow: () => now, renewEveryMs: 20 })
      await store.commit(batch({ keys: [key('short', now + 1_000), key('long', now + 3_600_000)] }))
      const keys = async () =>
        (await db.admin.query('SELECT key FROM flowing.keys WHERE journal = $1 ORDER BY key', [db.journal()])).rows
      now += 30_000 // expired, but the last sweep (at open) was less than a minute ago
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(await keys()).toEqual([{ key: 'long' }, { key: 'short' }])
      now += 31_000
      await eventually(async () => ((await keys()).length === 1 ? true : undefined))
      expect(await keys()).toEqual([{ key: 'long' }])
    })

    it('replaces and removes dead letters and keys by id', async () => {
      const store = await db.open({ owner: 'me' })
      const later = Date.now() + 60_000
      await store.commit(
        batch({ deadLetters: [letter('d1'), letter('d2')], keys: [key('k1', later), key('k2', later)] }),
      )
      await store.commit(
        batch({
          deadLetters: [letter('d1', 5)],
          deadLettersRemoved: ['d2'],
          keysRemoved: ['k1'],
          keys: [key('k3', later)],
        }),
      )
      await store.close()
      const contents = (await db.open({ owner: 'me' })).recovered()
      expect(contents.deadLetters).toEqual([letter('d1', 5)])
      expect(contents.keys.map((k) => k.key).sort()).toEqual(['k2', 'k3'])
    })

    it('writes nothing of a batch with a value JSON cannot take, and says so', async () => {
      const store = await db.open({ owner: 'me' })
      const bad = record('bad', { checkpoint: { n: 1n } })
      const failing = store.commit(batch({ messages: [record('fine'), bad] }))
      await expect(failing).rejects.toMatchObject({
        name: 'StoreError',
        operation: 'commit',
        message: expect.stringMatching(/a record cannot be written as JSON: .*BigInt/),
      })
      await store.close()
      expect((await db.open({ owner: 'me' })).recovered().messages).toEqual([])
    })

    it('removes 50k rows in one batch after hundreds of small ones on the same connection, in seconds', async () => {
      // A plan cached while the table was small would filter a scan of 50k rows with 50k ids (minutes).
      const pool = new pg.Pool({ connectionString: db.url, max: 1 })
      pool.on('error', () => {})
      try {
        const store = await db.open({ pool, owner: 'me' })
        for (let n = 0; n < 200; n++) {
          await store.commit(batch({ messages: [record(`s${n}`)], removed: n === 0 ? [] : [`s${n - 1}`] }))
        }
        const many = Array.from({ length: 50_000 }, (_, i) => record(`m${i}`))
        await store.commit(batch({ messages: many }))
        const started = performance.now()
        await store.commit(batch({ removed: ids(many) }))
        expect(performance.now() - started).toBeLessThan(10_000)
        await store.close()
        expect(ids((await db.open({ owner: 'me' })).recovered().messages)).toEqual(['s199'])
      } finally {
        await pool.end()
      }
    }, 60_000)

    it('refuses a commit after close()', async () => {
      const store = await db.open()
      await store.close()
      await expect(store.commit(batch({ messages: [record('late')] }))).rejects.toMatchObject({
        operation: 'commit',
        message: expect.stringContaining('the store is closed'),
      })
      expect(store.closed).toBe(true)
    })

    it('counts the batches it committed', async () => {
      const store = await db.open()
      await store.commit(batch({ messages: [record('a')] }))
      await store.commit(batch({ removed: ['a'] }))
      expect(store.commits).toBe(2)
    })
  })

  describe('close()', () => {
    it('is idempotent and releases the lease row', async () => {
      const store = await db.open({ owner: 'closing' })
      const [a, b] = [store.close(), store.close()]
      expect(a).toBe(b)
      await a
      await store.close()
      const leases = await db.admin.query('SELECT * FROM flowing.leases WHERE journal = $1', [db.journal()])
      expect(leases.rows).toEqual([])
    })
  })
})
