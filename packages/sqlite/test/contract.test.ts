import { describeStoreContract } from '../../core/test/contract/store-contract.js'
import { SqliteStore, type SynchronousMode, sqliteStore } from '../src/index.js'
import { removeTempDirs, tempJournal } from './fixtures.js'

for (const synchronous of ['normal', 'full'] satisfies SynchronousMode[]) {
  describeStoreContract(`SqliteStore, synchronous ${synchronous}`, {
    open: () => sqliteStore({ path: tempJournal(), synchronous }),
    reopen: (previous) => {
      const { path } = previous as SqliteStore
      previous.close()
      return new SqliteStore({ path, synchronous })
    },
    cleanup: removeTempDirs,
  })
}
