import { describeDurableLoop } from '../../core/test/contract/loop-contract.js'
import { type SqliteStore, type SynchronousMode, sqliteStore } from '../src/index.js'
import { removeTempDirs, tempJournal } from './fixtures.js'

for (const synchronous of ['normal', 'full'] satisfies SynchronousMode[]) {
  describeDurableLoop(`SQLite (synchronous ${synchronous})`, {
    open: () => sqliteStore({ path: tempJournal(), synchronous }),
    // A crash: the old handle is dropped (closed, so it writes nothing more), the file opened again.
    reopen: (previous) => {
      const { path } = previous as SqliteStore
      previous.close()
      return sqliteStore({ path, synchronous })
    },
    cleanup: removeTempDirs,
  })
}
