/**
 * Where the files threads start from are: beside this one in `dist/`; when running from the sources
 * (the tests), the build's.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The `file:` URL of the built thread entry `name` (`worker.js`, `probe-thread.js`). */
export function threadFile(name: string): string {
  const beside = new URL(`./${name}`, import.meta.url)
  if (existsSync(fileURLToPath(beside))) return beside.href
  return new URL(`../dist/${name}`, import.meta.url).href
}
