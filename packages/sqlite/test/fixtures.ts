/** Temporary journals: each test gets fresh directories under the OS temp dir, removed after it. */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FlowingError, StoreError } from '@flowing/core'
import { expect } from 'vitest'

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

/**
 * The error `fn` throws, checked to be a `type` (`StoreError` or a subclass) of the store at `path` (its
 * absolute path) failing `operation`: its class, name, code, store, operation and message prefix.
 */
export function storeError<E extends StoreError = StoreError>(
  fn: () => unknown,
  path: string,
  operation: StoreError['operation'],
  type: abstract new (...args: never[]) => E = StoreError as never,
): E {
  const error = thrown(fn)
  expect(error).toBeInstanceOf(type)
  expect(error).toBeInstanceOf(StoreError)
  expect(error).toBeInstanceOf(FlowingError)
  const e = error as E
  expect([e.name, e.code, e.store, e.operation]).toEqual([type.name, 'ERR_FLOWING_STORE', `sqlite:${path}`, operation])
  expect(e.message.startsWith(`Journal store sqlite:${path} failed to ${operation}: `)).toBe(true)
  return e
}

/**
 * The SHA-256 of the file at `path`, read by a child process: a descriptor of the journal opened and
 * closed in this process would drop the POSIX lock a store of this process holds on it.
 */
export function digest(path: string): string {
  const script = `process.stdout.write(require('node:crypto').createHash('sha256').update(require('node:fs').readFileSync(process.argv[1])).digest('hex'))`
  const run = spawnSync(process.execPath, ['-e', script, path], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`digest of ${path} failed: ${run.stderr}`)
  return run.stdout
}

/** What a refused open must not change: the names in `dir` and below, and the bytes of `path`. */
export function snapshot(dir: string, path: string): { readonly files: string[]; readonly digest: string } {
  return { files: readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort(), digest: digest(path) }
}
