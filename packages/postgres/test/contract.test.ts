import type { Store } from '@flowing/core'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { describeStoreContract } from '../../core/test/contract/store-contract.js'
import type { PostgresStore } from '../src/index.js'
import { describePostgres, useDatabase } from './fixtures.js'

describePostgres('the store contract', () => {
  const db = useDatabase()
  // One pool for the hundreds of stores the contract opens (a new connection costs more than an open).
  let pool: pg.Pool
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: db.url, max: 8 })
    pool.on('error', () => {})
  })
  afterAll(() => pool.end())
  let journals = 0
  describeStoreContract('PostgresStore', {
    // A new journal for every store the contract opens: an empty store.
    open: () => db.open({ pool, journal: `contract-${++journals}`, owner: 'contract' }),
    // A crash and a restart: the old handle is not closed; a store with the same owner takes the
    // lease again (a new token fences the old handle) and recovers the owner's rows at once.
    reopen: (previous: Store) => {
      const { journal, owner } = previous as PostgresStore
      return db.open({ pool, journal, owner })
    },
  })
})
