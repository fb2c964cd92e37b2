/**
 * The child process of `errors.test.ts` (not a test itself), run as an unprivileged user when the
 * tests run as root (root writes through any permission bits), and of `one-owner.test.ts`: opens the
 * journal at `<path>`, and prints what happened as one line of JSON — `{ "opened": true }` or the
 * error's fields — with the time the open took, in ms.
 *
 * Run: `node open-child.mjs <path>` (the bundle `bundle.ts` makes of it)
 */
import { writeSync } from 'node:fs'
import { StoreError } from '@flowing/core'
import { JournalLockedError, SqliteStore } from '../../src/index.js'

const [path] = process.argv.slice(2) as [string]
const started = performance.now()
const ms = () => Math.round(performance.now() - started)
try {
  const store = new SqliteStore({ path })
  store.commit({ messages: [], removed: ['x'], deadLetters: [], deadLettersRemoved: [], keys: [], keysRemoved: [] })
  store.close()
  writeSync(1, `${JSON.stringify({ opened: true, ms: ms() })}\n`)
} catch (error) {
  const e = error as StoreError
  const fields = { isStoreError: e instanceof StoreError, isLocked: e instanceof JournalLockedError, name: e.name }
  const more = { code: e.code, message: e.message, operation: e.operation, ms: ms() }
  writeSync(1, `${JSON.stringify({ ...fields, ...more, cause: (e.cause as { code?: string })?.code })}\n`)
}
