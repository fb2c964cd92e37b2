/**
 * The child process of `one-owner.test.ts` (not a test itself): opens the journal at `<path>` as a
 * store, commits the messages `<id>…` given after it, prints `owned`, then waits — a line `close` on
 * stdin closes the store, prints `closed` and exits; SIGKILL is the other way out.
 *
 * Run: `node owner-child.mjs <path> [id…]` (the bundle `bundle.ts` makes of it)
 */
import { writeSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { batch, record } from '../../../core/test/contract/store-fixtures.js'
import { SqliteStore } from '../../src/index.js'

const [path, ...ids] = process.argv.slice(2) as [string, ...string[]]
const store = new SqliteStore({ path })
store.commit(batch({ messages: ids.map((id) => record(id)) }))
writeSync(1, 'owned\n')
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'close') return
  store.close()
  writeSync(1, 'closed\n')
  process.exit(0)
})
