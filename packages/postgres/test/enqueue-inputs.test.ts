/**
 * Bad input to enqueue: each refusal is typed, says what is wrong, writes nothing, and leaves the
 * caller's transaction usable — it commits its other work afterwards.
 */
import { InvalidArgumentError, StoreError } from '@flowing/core'
import pg from 'pg'
import { beforeAll, describe, expect, it } from 'vitest'
import { createEnqueuer } from '../src/index.js'
import { appClient, enqueuerOf, type Mail } from './enqueue-fixtures.js'
import { describePostgres, useDatabase } from './fixtures.js'

type Attempt = (client: pg.Client) => Promise<unknown>

const cycle: Record<string, unknown> = {}
cycle['self'] = cycle

describePostgres('enqueue() refusals', () => {
  const db = useDatabase()

  beforeAll(async () => {
    if (db.url === '') return
    await db.admin.query('CREATE TABLE audit (note text)')
  })

  // Runs `attempt` inside a transaction, expects `refusal`, then commits other work in the same
  // transaction and checks that it, and no message, was written.
  async function refusedInTransaction(attempt: Attempt, refusal: Record<string, unknown>, type: unknown) {
    await (await db.open()).close()
    const client = await appClient(db)
    try {
      await client.query('BEGIN')
      const error = await attempt(client).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(type as new () => Error)
      expect(error).toMatchObject(refusal)
      await client.query('INSERT INTO audit VALUES ($1)', [db.journal()])
      await client.query('COMMIT')
      const audit = await db.admin.query('SELECT count(*)::int AS n FROM audit WHERE note = $1', [db.journal()])
      expect(audit.rows).toEqual([{ n: 1 }])
      const rows = await db.admin.query('SELECT count(*)::int AS n FROM flowing.messages WHERE journal = $1', [
        db.journal(),
      ])
      expect(rows.rows).toEqual([{ n: 0 }])
    } finally {
      await client.end()
    }
  }

  const payloads: [string, unknown, RegExp][] = [
    [
      'a BigInt',
      { to: 'x', n: 10n },
      /^Expected `payload` to be JSON-serializable \(it is written as JSON\): .*BigInt/,
    ],
    ['a cycle', { to: 'x', n: 1, cycle }, /^Expected `payload` to be JSON-serializable .*circular/],
  ]
  for (const [what, payload, message] of payloads) {
    it(`refuses a payload with ${what}: InvalidArgumentError naming \`payload\``, async () => {
      const attempt: Attempt = (c) => enqueuerOf(db).enqueue(c, 'email', payload as Mail['email'])
      await refusedInTransaction(
        attempt,
        { argument: 'payload', message: expect.stringMatching(message) },
        InvalidArgumentError,
      )
    })
  }

  const options: [string, unknown, Record<string, unknown>][] = [
    [
      'a misspelt option, naming the nearest one',
      { idempotencyKy: 'k' },
      { argument: 'options.idempotencyKy', hint: 'did you mean `idempotencyKey`?' },
    ],
    ['a post-only option', { signal: AbortSignal.timeout(1) }, { argument: 'options.signal' }],
    ['a priority out of range', { priority: 10 }, { argument: 'options.priority' }],
    ['a negative delay', { delayMs: -1 }, { argument: 'options.delayMs' }],
    ['an empty idempotency key', { idempotencyKey: '' }, { argument: 'options.idempotencyKey' }],
    ['a bad retry policy, by its path', { retry: { maxAttempts: 0 } }, { argument: 'options.retry.maxAttempts' }],
    ['a bad header name', { headers: { 'bad header': 'x' } }, { argument: 'options.headers' }],
    ['a key of the wrong type', { key: {} }, { argument: 'options.key' }],
  ]
  for (const [what, given, refusal] of options) {
    it(`refuses ${what}`, async () => {
      const attempt: Attempt = (c) => enqueuerOf(db).enqueue(c, 'email', { to: 'x', n: 1 }, given as never)
      await refusedInTransaction(attempt, refusal, InvalidArgumentError)
    })
  }

  it('refuses a type the enqueuer does not know, naming the nearest one', async () => {
    const attempt: Attempt = (c) => enqueuerOf(db).enqueue(c, 'emial' as 'email', { to: 'x', n: 1 })
    await refusedInTransaction(attempt, { argument: 'type', hint: 'did you mean `email`?' }, InvalidArgumentError)
  })

  it('refuses a schema that holds no journal', async () => {
    const enqueuer = createEnqueuer<Mail>({ schema: 'elsewhere', journal: db.journal(), types: ['email'] })
    const attempt: Attempt = (c) => enqueuer.enqueue(c, 'email', { to: 'x', n: 1 })
    await refusedInTransaction(attempt, { argument: 'options.schema' }, InvalidArgumentError)
  })

  it('refuses a journal no store has opened, naming the nearest one', async () => {
    const journal = db.journal()
    const enqueuer = createEnqueuer<Mail>({ journal: `${journal}x`, types: ['email'] })
    const attempt: Attempt = (c) => enqueuer.enqueue(c, 'email', { to: 'x', n: 1 })
    await refusedInTransaction(
      attempt,
      { argument: 'options.journal', hint: `did you mean \`${journal}\`?` },
      InvalidArgumentError,
    )
  })

  it('refuses a transaction that already failed, and writes nothing', async () => {
    await (await db.open()).close()
    const client = await appClient(db)
    try {
      await client.query('BEGIN')
      await client.query('SELECT 1/0').catch(() => {})
      await expect(enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 })).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        argument: 'client',
        message: expect.stringContaining('ROLLBACK it'),
      })
      await client.query('ROLLBACK')
    } finally {
      await client.end()
    }
  })

  describe('the client', () => {
    it('refuses a client in no transaction (never autocommit): InvalidArgumentError, nothing written', async () => {
      await (await db.open()).close()
      const client = await appClient(db)
      try {
        await expect(enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 })).rejects.toMatchObject({
          name: 'InvalidArgumentError',
          argument: 'client',
          message: expect.stringContaining('send BEGIN first'),
        })
        const rows = await db.admin.query('SELECT count(*)::int AS n FROM flowing.messages WHERE journal = $1', [
          db.journal(),
        ])
        expect(rows.rows).toEqual([{ n: 0 }])
      } finally {
        await client.end()
      }
    })

    it('refuses a closed client, and a pool (whose queries run outside any transaction)', async () => {
      const client = await appClient(db)
      await client.end()
      const enqueuer = enqueuerOf(db)
      await expect(enqueuer.enqueue(client, 'email', { to: 'x', n: 1 })).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        argument: 'client',
      })
      const pool = new pg.Pool({ connectionString: db.url })
      try {
        await expect(enqueuer.enqueue(pool as never, 'email', { to: 'x', n: 1 })).rejects.toMatchObject({
          name: 'InvalidArgumentError',
          argument: 'client',
          message: expect.stringContaining('not a Pool'),
        })
      } finally {
        await pool.end()
      }
    })

    it('turns a connection lost inside the transaction into a StoreError', async () => {
      await (await db.open()).close()
      const client = await appClient(db)
      client.on('error', () => {})
      await client.query('BEGIN')
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
      await db.admin.query('SELECT pg_terminate_backend($1)', [pid])
      const error = await enqueuerOf(db)
        .enqueue(client, 'email', { to: 'x', n: 1 })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(StoreError)
      expect(error).toMatchObject({ operation: 'commit', message: expect.stringContaining('the enqueue failed') })
      await client.end().catch(() => {})
    })
  })

  describe('createEnqueuer()', () => {
    it('refuses bad options before any connection is made', () => {
      const make = (options: unknown) => () => createEnqueuer(options as never)
      expect(make({ types: [] })).toThrow(InvalidArgumentError)
      expect(make({ types: ['a', ''] })).toThrow(/options\.types\[1\]/)
      expect(make({ types: ['a'], jurnal: 'x' })).toThrow(/did you mean `journal`\?/)
      expect(make({ types: ['a'], schema: 'no-dash' })).toThrow(/options\.schema/)
      expect(make({ types: ['a'], journal: '' })).toThrow(/options\.journal/)
      expect(make(undefined)).toThrow(InvalidArgumentError)
    })
  })
})
