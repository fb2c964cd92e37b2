/**
 * Transactional enqueue against a real server: what commits runs once, what rolls back never runs,
 * key order and delays hold, several stores of a journal run each message once, a lost notification
 * is made up for by the renewals, and idempotency keys are unique across transactions.
 */
import { createLoop, DuplicateMessageError } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { createEnqueuer } from '../src/index.js'
import { appClient, enqueuerOf, inTransaction, recorder, sleep, stopAll } from './enqueue-fixtures.js'
import { describePostgres, eventually, useDatabase } from './fixtures.js'

// Renewals this rare cannot be what delivers a message within LATENCY_BOUND_MS: the notification is.
const SLOW_RENEWALS = { leaseMs: 60_000, renewEveryMs: 20_000 }
// Commit-to-start, with the other core busy: milliseconds in practice, one second at worst here.
const LATENCY_BOUND_MS = 1_000

describePostgres('enqueue()', () => {
  const db = useDatabase()

  describe('atomic with the caller’s transaction', () => {
    it('runs a committed message once, as soon as the transaction commits', async () => {
      const r = recorder(await db.open(SLOW_RENEWALS))
      const client = await appClient(db)
      try {
        await client.query('CREATE TABLE IF NOT EXISTS users (email text)')
        const committedAt = await inTransaction(client, async () => {
          await client.query('INSERT INTO users VALUES ($1)', ['ada@example.com'])
          await enqueuerOf(db).enqueue(client, 'email', { to: 'ada@example.com', n: 1 })
          return performance.now()
        })
        await eventually(() => (r.ran.length === 1 ? true : undefined))
        expect((r.startedAt.get(1) ?? Number.NaN) - committedAt).toBeLessThan(LATENCY_BOUND_MS)
        await r.loop.drain()
        await sleep(100)
        expect(r.ran).toEqual([1])
        expect(r.store.adopted).toBe(1)
      } finally {
        await client.end()
        await stopAll(r)
      }
    })

    it('never runs a message whose transaction rolled back', async () => {
      const r = recorder(await db.open({ renewEveryMs: 20 }))
      const client = await appClient(db)
      try {
        await client.query('BEGIN')
        await enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 })
        await client.query('ROLLBACK')
        await inTransaction(client, () => enqueuerOf(db).enqueue(client, 'email', { to: 'y', n: 2 }))
        await eventually(() => (r.ran.length === 1 ? true : undefined))
        await sleep(200) // ten renewals, each a takeover
        expect(r.ran).toEqual([2])
      } finally {
        await client.end()
        await stopAll(r)
      }
    })

    it('keeps what was enqueued while no loop ran: the next store to open takes it', async () => {
      await (await db.open()).close() // a store has opened the journal once
      const client = await appClient(db)
      try {
        await inTransaction(client, () => enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 7 }))
      } finally {
        await client.end()
      }
      const store = await db.open()
      expect(store.recovered().messages.map((m) => m.type)).toEqual(['email'])
      const r = recorder(store)
      await eventually(() => (r.ran.length === 1 ? true : undefined))
      expect(r.ran).toEqual([7])
      await stopAll(r)
    })
  })

  describe('as a post', () => {
    it('runs the messages of one key in enqueue order, in one transaction or successive ones', async () => {
      const r = recorder(await db.open(SLOW_RENEWALS))
      const client = await appClient(db)
      const enqueuer = enqueuerOf(db)
      try {
        await inTransaction(client, async () => {
          for (const n of [1, 2, 3]) await enqueuer.enqueue(client, 'email', { to: 'k', n }, { key: 'k' })
        })
        for (const n of [4, 5, 6]) {
          await inTransaction(client, () => enqueuer.enqueue(client, 'email', { to: 'k', n }, { key: 'k' }))
        }
        await eventually(() => (r.ran.length === 6 ? true : undefined))
        expect(r.ran).toEqual([1, 2, 3, 4, 5, 6])
      } finally {
        await client.end()
        await stopAll(r)
      }
    })

    it('runs a delayed message no sooner than its delay after the enqueue', async () => {
      const r = recorder(await db.open(SLOW_RENEWALS))
      const client = await appClient(db)
      try {
        const enqueuedAt = Date.now()
        await inTransaction(client, () => enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 }, { delayMs: 400 }))
        await eventually(() => (r.ran.length === 1 ? true : undefined))
        expect(r.wallAt.get(1)).toBeGreaterThanOrEqual(enqueuedAt + 400)
      } finally {
        await client.end()
        await stopAll(r)
      }
    })

    it('carries priority, retry policy, deadline, group and headers into the loop', async () => {
      const store = await db.open(SLOW_RENEWALS)
      const loop = createLoop<{ job: { n: number } }>({ store, logger: false, groups: { concurrency: 1 } })
      const seen: unknown[] = []
      let attempts = 0
      loop.on('job', (m) => {
        attempts++
        seen.push({ priority: m.priority, headers: m.headers })
        if (attempts === 1) throw new Error('once')
      })
      loop.start()
      const client = await appClient(db)
      const enqueuer = createEnqueuer<{ job: { n: number } }>({
        journal: db.journal(),
        types: ['job'],
      })
      try {
        await inTransaction(client, () =>
          enqueuer.enqueue(
            client,
            'job',
            { n: 1 },
            {
              priority: 1,
              retry: { maxAttempts: 2, baseMs: 1, jitter: 0 },
              handlerTimeoutMs: 5_000,
              group: 'tenants',
              headers: { 'x-tenant': 'acme' },
            },
          ),
        )
        await eventually(() => (attempts === 2 ? true : undefined))
        expect(seen[1]).toMatchObject({ priority: 1, headers: { 'x-tenant': 'acme' } })
      } finally {
        await client.end()
        await loop.stop()
      }
    })
  })

  describe('several stores sharing the journal', () => {
    it('runs each enqueued message exactly once overall (3 stores, 60 messages in 12 transactions)', async () => {
      const loops = [
        recorder(await db.open({ owner: 'a', ...SLOW_RENEWALS })),
        recorder(await db.open({ owner: 'b', ...SLOW_RENEWALS })),
        recorder(await db.open({ owner: 'c', ...SLOW_RENEWALS })),
      ]
      const clients = await Promise.all([appClient(db), appClient(db), appClient(db)])
      const enqueuer = enqueuerOf(db)
      try {
        await Promise.all(
          clients.map(async (client, c) => {
            for (let t = 0; t < 4; t++) {
              await inTransaction(client, async () => {
                for (let i = 0; i < 5; i++)
                  await enqueuer.enqueue(client, 'email', { to: 'x', n: c * 100 + t * 10 + i })
              })
            }
          }),
        )
        const all = () => loops.flatMap((r) => r.ran)
        await eventually(() => (all().length >= 60 ? true : undefined))
        await sleep(300)
        expect(all()).toHaveLength(60)
        expect(new Set(all()).size).toBe(60)
        expect(loops.reduce((sum, r) => sum + r.store.adopted, 0)).toBe(60)
      } finally {
        await Promise.all(clients.map((c) => c.end()))
        await stopAll(...loops)
      }
    })
  })

  describe('without the notification', () => {
    it('delivers within two renewal periods when the store does not LISTEN (the polling fallback)', async () => {
      const renewEveryMs = 250
      const r = recorder(await db.open({ listen: false, leaseMs: 5_000, renewEveryMs }))
      expect(r.store.listening).toBe(false)
      const client = await appClient(db)
      try {
        const committedAt = await inTransaction(client, async () => {
          await enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 })
          return performance.now()
        })
        await eventually(() => (r.ran.length === 1 ? true : undefined))
        expect((r.startedAt.get(1) ?? Number.NaN) - committedAt).toBeLessThan(2 * renewEveryMs + LATENCY_BOUND_MS)
      } finally {
        await client.end()
        await stopAll(r)
      }
    })

    it('delivers after the LISTEN connection is terminated (pg_terminate_backend), and LISTENs again', async () => {
      const renewEveryMs = 250
      const r = recorder(await db.open({ leaseMs: 5_000, renewEveryMs }))
      expect(r.store.listening).toBe(true)
      const client = await appClient(db)
      try {
        const killed = await db.admin.query(
          "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name LIKE '%:listen'",
        )
        expect(killed.rows).toEqual([{ done: true }])
        const committedAt = await inTransaction(client, async () => {
          await enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 })
          return performance.now()
        })
        await eventually(() => (r.ran.length === 1 ? true : undefined))
        expect((r.startedAt.get(1) ?? Number.NaN) - committedAt).toBeLessThan(2 * renewEveryMs + LATENCY_BOUND_MS)
        await eventually(() => (r.store.listening ? true : undefined))
        const again = await inTransaction(client, async () => {
          await enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 2 })
          return performance.now()
        })
        await eventually(() => (r.ran.length === 2 ? true : undefined))
        expect((r.startedAt.get(2) ?? Number.NaN) - again).toBeLessThan(LATENCY_BOUND_MS)
      } finally {
        await client.end()
        await stopAll(r)
      }
    })
  })

  describe('idempotency keys, checked by the database', () => {
    it('refuses a key in flight, and a finished one, with DuplicateMessageError; the transaction goes on', async () => {
      const store = await db.open(SLOW_RENEWALS)
      const client = await appClient(db)
      const enqueuer = enqueuerOf(db)
      try {
        await inTransaction(client, () =>
          enqueuer.enqueue(client, 'email', { to: 'x', n: 1 }, { idempotencyKey: 'k1' }),
        )
        await client.query('BEGIN')
        const again = enqueuer.enqueue(client, 'email', { to: 'x', n: 2 }, { idempotencyKey: 'k1' })
        await expect(again).rejects.toBeInstanceOf(DuplicateMessageError)
        await expect(again).rejects.toMatchObject({ idempotencyKey: 'k1', ledgerState: 'processing' })
        await enqueuer.enqueue(client, 'email', { to: 'x', n: 3 }, { idempotencyKey: 'k3' })
        await client.query('COMMIT')
        const r = recorder(store) // now the loop runs k1 and k3, and finishes their keys
        await eventually(() => (r.ran.length === 2 ? true : undefined))
        await r.loop.flushed()
        expect(r.ran.sort()).toEqual([1, 3])
        await client.query('BEGIN')
        const late = enqueuer.enqueue(client, 'email', { to: 'x', n: 4 }, { idempotencyKey: 'k1' })
        await expect(late).rejects.toMatchObject({ name: 'DuplicateMessageError', ledgerState: 'done' })
        await client.query('COMMIT')
        await stopAll(r)
      } finally {
        await client.end()
      }
    })

    it('accepts exactly one of two transactions enqueueing the same key at once', async () => {
      await (await db.open()).close()
      const [a, b] = await Promise.all([appClient(db), appClient(db)])
      const enqueuer = enqueuerOf(db)
      try {
        for (const winner of ['commit', 'rollback'] as const) {
          const key = `same-${winner}`
          await a.query('BEGIN')
          await b.query('BEGIN')
          await enqueuer.enqueue(a, 'email', { to: 'a', n: 1 }, { idempotencyKey: key })
          const second = enqueuer.enqueue(b, 'email', { to: 'b', n: 2 }, { idempotencyKey: key }).then(
            () => 'accepted',
            (e: unknown) => (e instanceof DuplicateMessageError ? 'duplicate' : String(e)),
          )
          await sleep(100)
          await a.query(winner === 'commit' ? 'COMMIT' : 'ROLLBACK') // b was waiting on the key's row
          expect(await second).toBe(winner === 'commit' ? 'duplicate' : 'accepted')
          await b.query('COMMIT')
          const rows = await db.admin.query(
            'SELECT count(*)::int AS n FROM flowing.messages WHERE journal = $1 AND idem_key = $2',
            [db.journal(), key],
          )
          expect(rows.rows).toEqual([{ n: 1 }])
        }
      } finally {
        await Promise.all([a.end(), b.end()])
      }
    })

    it('makes the loop that took an enqueued key over refuse a post of the same key', async () => {
      const r = recorder(await db.open(SLOW_RENEWALS))
      r.loop.pause() // taken over, not run: the key is in flight in the loop
      const client = await appClient(db)
      try {
        await inTransaction(client, () =>
          enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 }, { idempotencyKey: 'enqueued' }),
        )
        await eventually(() => (r.store.adopted === 1 ? true : undefined))
        expect(() => r.loop.post('email', { to: 'x', n: 2 }, { idempotencyKey: 'enqueued' })).toThrow(
          DuplicateMessageError,
        )
      } finally {
        await client.end()
        await stopAll(r)
      }
    })

    it('refuses an enqueue of a key a loop posted and committed, while it is in flight', async () => {
      const store = await db.open(SLOW_RENEWALS)
      const r = recorder(store)
      r.loop.pause()
      r.loop.post('email', { to: 'x', n: 1 }, { idempotencyKey: 'posted' })
      await r.loop.flushed()
      const client = await appClient(db)
      try {
        await client.query('BEGIN')
        await expect(
          enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 2 }, { idempotencyKey: 'posted' }),
        ).rejects.toMatchObject({
          name: 'DuplicateMessageError',
          ledgerState: 'processing',
        })
        await client.query('COMMIT')
      } finally {
        await client.end()
        await stopAll(r)
      }
    })
  })
})
