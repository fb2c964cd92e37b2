import { describeDurableLoop } from '../../core/test/contract/loop-contract.js'
import { describePostgres, useDatabase } from './fixtures.js'

describePostgres('the durable-loop contract', () => {
  const db = useDatabase()
  describeDurableLoop('PostgreSQL', {
    open: () => db.open(),
    // A crash: the old handle is dropped (closed, which also gives its lease up), a new owner opens
    // the same journal and takes the rows over.
    reopen: async (previous) => {
      await previous.close()
      return db.open()
    },
  })
})
