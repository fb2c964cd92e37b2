import type { Store } from '@flowing/core'
import { describeStoreContract } from '../../core/test/contract/store-contract.js'
import type { PostgresStore } from '../src/index.js'
import { describePostgres, useDatabase } from './fixtures.js'

describePostgres('the store contract', () => {
  const db = useDatabase()
  let journals = 0
  describeStoreContract('PostgresStore', {
    // A new journal for every store the contract opens: an empty store.
    open: () => db.open({ journal: `contract-${++journals}`, owner: 'contract' }),
    // A crash and a restart: the old handle is not closed; a store with the same owner takes the
    // lease again (a new token fences the old handle) and recovers the owner's rows at once.
    reopen: (previous: Store) => {
      const { journal, owner } = previous as PostgresStore
      return db.open({ journal, owner })
    },
  })
})
