/** Temporary journals: each test gets fresh directories under the OS temp dir, removed after it. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Directories made since the last {@link removeTempDirs}. */
const made: string[] = []

/** A new empty directory. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flowing-sqlite-'))
  made.push(dir)
  return dir
}

/** A path for a new journal in a new directory. */
export function tempJournal(): string {
  return join(tempDir(), 'journal.db')
}

/** Removes every directory {@link tempDir} made. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Runs `fn` and returns what it threw (failing if it threw nothing). */
export function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw, nothing was thrown')
}
