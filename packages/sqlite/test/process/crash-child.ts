/**
 * The child process of `crash.test.ts` (not a test itself): opens the journal, prints
 * `start <k>` (the last batch it recovered), then commits batches k+1, k+2 … as fast as it can,
 * printing `committed <n>` after each commit returned — until it is killed with SIGKILL.
 *
 * Run: `node --conditions=@flowing/source --import tsx crash-child.ts <path> <normal|full>`, or the
 * bundle `bundle.ts` makes of it: `node crash-child.mjs <path> <normal|full>`
 */
import { writeSync } from 'node:fs'
import { SqliteStore, type SynchronousMode } from '../../src/index.js'
import { crashBatch, lastBatch } from './crash-batches.js'

const [path, synchronous] = process.argv.slice(2) as [string, SynchronousMode]
const store = new SqliteStore({ path, synchronous })
let n = lastBatch(store.recovered().messages)
// writeSync: the line is in the pipe before the next batch starts, whatever the event loop does.
writeSync(1, `start ${n}\n`)
for (;;) {
  n++
  store.commit(crashBatch(n))
  writeSync(1, `committed ${n}\n`)
}
