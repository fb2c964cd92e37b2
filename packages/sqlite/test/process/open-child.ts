/**
 * The child process of `errors.test.ts` (not a test itself), run as an unprivileged user when the
 * tests run as root (root writes through any permission bits): opens the journal at `<path>`, and
 * prints what happened as one line of JSON — `{ "opened": true }` or the error's fields.
 *
 * Run: `node open-child.mjs <path>` (the bundle `bundle.ts` makes of it)
 */
import { writeSync } from 'node:fs'
import { StoreError } from '@flowing/core'
import { SqliteStore } from '../../src/index.js'

const [path] = process.argv.slice(2) as [string]
try {
  const store = new SqliteStore({ path })
  store.commit({ messages: [], removed: ['x'], deadLetters: [], deadLettersRemoved: [], keys: [], keysRemoved: [] })
  store.close()
  writeSync(1, `${JSON.stringify({ opened: true })}\n`)
} catch (error) {
  const e = error as StoreError
  const fields = { isStoreError: e instanceof StoreError, name: e.name, code: e.code, message: e.message }
  writeSync(
    1,
    `${JSON.stringify({ ...fields, operation: e.operation, cause: (e.cause as { code?: string })?.code })}\n`,
  )
}
