import { hostname } from 'node:os'
import { InvalidArgumentError } from '@flowing/core'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { postgresStore } from '../src/index.js'
import { resolveOptions } from '../src/options.js'

// No server needed: every option is checked before a connection is made.
describe('postgresStore() options', () => {
  it('applies the defaults', () => {
    const o = resolveOptions({})
    expect(o).toMatchObject({
      schema: 'flowing',
      journal: 'default',
      leaseMs: 15_000,
      renewEveryMs: 5_000,
      listen: true,
    })
    expect(o.owner).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{8}$`))
    expect(resolveOptions({}).owner).not.toBe(o.owner)
    expect(resolveOptions(undefined).journal).toBe('default')
    expect(resolveOptions({ leaseMs: 100 }).renewEveryMs).toBe(33)
  })

  it('takes undefined for any option as its default', () => {
    expect(resolveOptions({ connectionString: undefined, schema: undefined, leaseMs: undefined })).toMatchObject({
      schema: 'flowing',
      leaseMs: 15_000,
    })
  })

  const refused: [string, unknown, RegExp][] = [
    ['options', 'postgres://x', /^Expected `options` to be an object, got `"postgres:\/\/x"` \(string\)/],
    ['options', null, /^Expected `options` to be an object/],
    [
      'options.leaseMS',
      { leaseMS: 1 },
      /^Expected `options.leaseMS` to be one of the known options \(connectionString, pool, schema, journal, owner, leaseMs, renewEveryMs, listen, wallNow\), got `1` \(number\); did you mean `leaseMs`\?$/,
    ],
    [
      'options.host',
      { host: 'db' },
      /^Expected `options.host` to be one of the known options .*got `"db"` \(string\)$/,
    ],
    [
      'options.connectionString',
      { connectionString: 5432 },
      /^Expected `options.connectionString` to be a non-empty string \(a postgres:\/\/ URL\), got `5432` \(number\)/,
    ],
    ['options.connectionString', { connectionString: ' ' }, /non-empty string/],
    ['options.pool', { pool: {} }, /^Expected `options.pool` to be a pg.Pool \(with query\(\) and connect\(\)\)/],
    ['options.schema', { schema: 'my-schema' }, /^Expected `options.schema` to be a plain identifier/],
    ['options.schema', { schema: '1st' }, /plain identifier/],
    ['options.schema', { schema: 'x'.repeat(64) }, /at most 63 characters/],
    [
      'options.journal',
      { journal: '' },
      /^Expected `options.journal` to be a non-empty string of at most 200 characters/,
    ],
    ['options.journal', { journal: 7 }, /got `7` \(number\)/],
    ['options.owner', { owner: 'a\u0000b' }, /^Expected `options.owner` to be a non-empty string .*no NUL/],
    ['options.owner', { owner: 'lone\ud800' }, /no unpaired surrogate/],
    ['options.leaseMs', { leaseMs: 5 }, /^Expected `options.leaseMs` to be an integer ≥ 10, got `5` \(number\)/],
    ['options.leaseMs', { leaseMs: 1.5e3 + 0.5 }, /an integer ≥ 10/],
    ['options.leaseMs', { leaseMs: '15000' }, /got `"15000"` \(string\)/],
    ['options.renewEveryMs', { renewEveryMs: 0 }, /^Expected `options.renewEveryMs` to be an integer ≥ 1/],
    [
      'options.renewEveryMs',
      { leaseMs: 1_000, renewEveryMs: 1_000 },
      /^Expected `options.renewEveryMs` to be below `leaseMs` \(1000\), got `1000`/,
    ],
    ['options.wallNow', { wallNow: 0 }, /^Expected `options.wallNow` to be a function/],
    ['options.listen', { listen: 'yes' }, /^Expected `options.listen` to be a boolean, got `"yes"`/],
  ]
  for (const [argument, options, message] of refused) {
    it(`refuses ${JSON.stringify(options) ?? String(options)} naming \`${argument}\``, () => {
      const attempt = () => resolveOptions(options)
      expect(attempt).toThrow(InvalidArgumentError)
      expect(attempt).toThrow(message)
      expect(attempt).toThrow(expect.objectContaining({ argument, code: 'ERR_FLOWING_INVALID_ARGUMENT' }))
    })
  }

  it('refuses a connection string and a pool together', () => {
    const pool = new pg.Pool()
    expect(() => resolveOptions({ connectionString: 'postgres://db/app', pool })).toThrow(
      /^Expected `options.pool` to be absent when `connectionString` is given \(one or the other\)/,
    )
  })

  it('rejects (not throws) from postgresStore(), before connecting', async () => {
    const opening = postgresStore({ connectionString: 'postgres://127.0.0.1:1/none', jurnal: 'x' } as never)
    await expect(opening).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(opening).rejects.toThrow(/did you mean `journal`\?/)
  })
})
