import { spawnSync } from 'node:child_process'
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError, StoreError } from '@flowing/core'
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { batch, letter, record } from '../../core/test/contract/store-fixtures.js'
import { SqliteStore, type SqliteStoreOptions, sqliteStore } from '../src/index.js'
import { removeTempDirs, snapshot, storeError, tempDir, tempJournal, thrown } from './fixtures.js'
import { bundleChild } from './process/bundle.js'

afterEach(removeTempDirs)

/**
 * The StoreError (`open`) of opening the journal at `path`, checked to leave its directory and its bytes
 * as they were: no `-wal`, `-shm` or `-journal` file, not a byte written.
 */
function refusedOpen(path: string): StoreError {
  const dir = dirname(path)
  const before = snapshot(dir, path)
  const e = storeError(() => sqliteStore({ path }), path, 'open')
  expect(snapshot(dir, path)).toEqual(before)
  return e
}

function argumentError(options: unknown): InvalidArgumentError {
  const error = thrown(() => sqliteStore(options as SqliteStoreOptions))
  expect(error).toBeInstanceOf(InvalidArgumentError)
  return error as InvalidArgumentError
}

describe('sqliteStore() options', () => {
  it('names an unknown option, lists the known ones and suggests a near miss', () => {
    const e = argumentError({ path: tempJournal(), synchronus: 'full' })
    expect(e.argument).toBe('options.synchronus')
    expect(e.message).toBe(
      'Expected `options.synchronus` to be one of the known options (path, synchronous, busyTimeoutMs, maxBytes, wallNow), got `"full"` (string); did you mean `synchronous`?',
    )
    expect(argumentError({ path: tempJournal(), fsync: true }).message).not.toContain('did you mean')
  })

  it.each([
    [undefined, 'options', 'an object with a `path`'],
    ['journal.db', 'options', 'an object with a `path`'],
    [{}, 'options.path', 'a non-empty file path'],
    [{ path: 42 }, 'options.path', 'a non-empty file path'],
    [{ path: '  ' }, 'options.path', 'a non-empty file path'],
    [{ path: ':memory:' }, 'options.path', 'a file path (not `:memory:` nor a `file:` URI)'],
    [{ path: 'j.db', synchronous: 'FULL' }, 'options.synchronous', "one of 'normal', 'full'"],
    [{ path: 'j.db', synchronous: 'off' }, 'options.synchronous', "one of 'normal', 'full'"],
    [{ path: 'j.db', busyTimeoutMs: 1.5 }, 'options.busyTimeoutMs', 'an integer ≥ 0'],
    [{ path: 'j.db', busyTimeoutMs: '100' }, 'options.busyTimeoutMs', 'an integer ≥ 0'],
    [{ path: 'j.db', maxBytes: 1024 }, 'options.maxBytes', 'an integer ≥ 65536'],
    [{ path: 'j.db', wallNow: 5 }, 'options.wallNow', 'a function'],
  ])('refuses %j: %s must be %s', (options, argument, rule) => {
    const e = argumentError(options)
    expect(e.argument).toBe(argument)
    expect(e.message.startsWith(`Expected \`${argument}\` to be ${rule}, got `)).toBe(true)
  })
})

describe('sqliteStore() open failures', () => {
  it('a file of garbage bytes: not a SQLite database', () => {
    const path = join(tempDir(), 'garbage.db')
    writeFileSync(path, Buffer.alloc(16_384, 0x5a))
    const e = refusedOpen(path)
    expect(e.message).toContain('the file is not a SQLite database (SQLITE_NOTADB: file is not a database)')
    expect((e.cause as { code: string }).code).toBe('SQLITE_NOTADB')
  })

  it('a journal whose pages were overwritten: corrupt, found while reading it back at open', () => {
    const path = tempJournal()
    const store = sqliteStore({ path })
    store.commit(batch({ messages: Array.from({ length: 2000 }, (_, i) => record(`m${i}`)) }))
    store.close()
    const fd = openSync(path, 'r+')
    writeSync(fd, Buffer.alloc(8 * 4096, 0xff), 0, 8 * 4096, 4096 * 4) // pages 5–12: the messages b-tree
    closeSync(fd)
    const e = refusedOpen(path)
    expect(e.message).toContain(
      'the database file is corrupt; restore it from a backup (see the README) (SQLITE_CORRUPT',
    )
  })

  it('a directory, a missing directory, a file where a directory should be', () => {
    const dir = tempDir()
    expect(storeError(() => sqliteStore({ path: dir }), dir, 'open').message).toContain('the path is a directory')
    const missing = join(dir, 'nope', 'journal.db')
    expect(storeError(() => sqliteStore({ path: missing }), missing, 'open').message).toContain(
      `its directory ${join(dir, 'nope')} does not exist (create it first)`,
    )
    writeFileSync(join(dir, 'file'), 'x')
    const under = join(dir, 'file', 'journal.db')
    expect(storeError(() => sqliteStore({ path: under }), under, 'open').message).toContain('is not a directory')
  })

  it('a SQLite database of another application (rollback or WAL mode), and a journal of a newer schema', () => {
    for (const mode of ['DELETE', 'WAL']) {
      const path = join(tempDir(), 'other.db')
      const other = new Database(path)
      other.pragma(`journal_mode = ${mode}`)
      other.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)')
      other.close()
      expect(refusedOpen(path).message).toContain('not a Flowing journal')
    }

    const journal = tempJournal()
    sqliteStore({ path: journal }).close()
    const edit = new Database(journal)
    edit.prepare("UPDATE meta SET value = '2' WHERE key = 'schema_version'").run()
    edit.close()
    expect(refusedOpen(journal).message).toContain(
      'the journal has schema version 2, this @flowing/sqlite reads version 1 (it was written by a newer release: upgrade)',
    )
  })

  it('a row edited into invalid JSON: recover names it', () => {
    const path = tempJournal()
    const store = sqliteStore({ path })
    store.commit(batch({ messages: [record('a'), record('b')] }))
    store.close()
    const edit = new Database(path)
    edit.prepare("UPDATE messages SET record = '{oops' WHERE id = 'b'").run()
    edit.close()
    expect(storeError(() => sqliteStore({ path }), path, 'recover').message).toContain(
      'row `b` of table messages is not valid JSON; the journal was edited or damaged',
    )
  })
})

/** What `open-child.ts` prints. */
interface ChildReport {
  readonly opened?: true
  readonly isStoreError?: boolean
  readonly code?: string
  readonly operation?: string
  readonly cause?: string
  readonly message?: string
}

describe('read-only files and directories', () => {
  const bundleDir = mkdtempSync(join(tmpdir(), 'flowing-sqlite-child-'))
  let child = ''
  // Root writes through any permission bits: the child then runs as `nobody`, for whom they hold.
  const asNobody = process.getuid?.() === 0 ? { uid: 65_534, gid: 65_534 } : {}
  // Why the child cannot run here, if it cannot: `nobody` must be able to read the driver's files (a
  // checkout under a 0700 home directory is not). The tests are then skipped, saying so.
  let unavailable: string | undefined
  beforeAll(async () => {
    child = await bundleChild(fileURLToPath(new URL('./process/open-child.ts', import.meta.url)), bundleDir, 'open')
    chmodSync(bundleDir, 0o755)
    const probe = tempDir()
    chmodSync(probe, 0o777)
    const run = spawnSync(process.execPath, [child, join(probe, 'probe.db')], { ...asNobody, encoding: 'utf8' })
    if (run.status !== 0 || !run.stdout.includes('"opened":true')) {
      unavailable = `the child cannot run as uid ${asNobody.uid ?? process.getuid?.()}: ${run.stderr.split('\n')[0]}`
    }
  }, 30_000)
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }))

  function openInChild(path: string): ChildReport {
    const run = spawnSync(process.execPath, [child, path], { ...asNobody, encoding: 'utf8', timeout: 20_000 })
    if (run.status !== 0) throw new Error(`child failed (${run.status ?? run.signal}): ${run.stderr}`)
    return JSON.parse(run.stdout) as ChildReport
  }

  it('a read-only journal file: StoreError (open) before SQLite touches it — nothing created, not a byte changed', ({
    skip,
  }) => {
    if (unavailable !== undefined) skip(unavailable)
    const dir = tempDir()
    const path = join(dir, 'journal.db')
    const store = sqliteStore({ path })
    store.commit(batch({ messages: [record('a')], deadLetters: [letter('d')] }))
    store.close()
    chmodSync(dir, 0o777) // the directory is writable (SQLite would make an empty -wal file in it) …
    chmodSync(path, 0o444) // … the file is not
    const before = snapshot(dir, path)
    const got = openInChild(path)
    expect(got).toMatchObject({ isStoreError: true, code: 'ERR_FLOWING_STORE', operation: 'open', cause: 'EACCES' })
    expect(got.message).toBe(
      `Journal store sqlite:${path} failed to open: the file is read-only for this process; the journal and its ` +
        `directory must be writable (SQLite writes a \`-wal\` file beside the journal) (EACCES: permission denied, access '${path}')`,
    )
    expect(snapshot(dir, path)).toEqual(before)
  })

  it('a read-only directory, for a new journal and an existing one: StoreError (open), nothing created', ({ skip }) => {
    if (unavailable !== undefined) skip(unavailable)
    const parent = tempDir()
    chmodSync(parent, 0o755)
    const dir = join(parent, 'ro')
    mkdirSync(dir)
    const existing = join(dir, 'journal.db')
    sqliteStore({ path: existing }).close()
    chmodSync(existing, 0o666) // the file is writable, its directory is not
    chmodSync(dir, 0o555)
    const before = snapshot(dir, existing)
    for (const path of [existing, join(dir, 'new.db')]) {
      const got = openInChild(path)
      expect(got).toMatchObject({ isStoreError: true, operation: 'open', cause: 'EACCES' })
      expect(got.message).toContain(
        `failed to open: its directory ${dir} is read-only for this process; the journal and its directory must be writable`,
      )
    }
    expect(snapshot(dir, existing)).toEqual(before)
  })
})

describe('SqliteStore.commit() failures', () => {
  it('a full disk (the maxBytes quota): StoreError, nothing written, and a batch that only removes still fits', () => {
    const path = tempJournal()
    const store = sqliteStore({ path, maxBytes: 256 * 1024 })
    const big = (n: number) => record(`m${n}`, { payloadJson: JSON.stringify({ n, text: 'x'.repeat(2000) }) })
    const committed: string[] = []
    let error: StoreError | undefined
    for (let b = 0; error === undefined && b < 100; b++) {
      const ids = Array.from({ length: 10 }, (_, i) => b * 10 + i)
      try {
        store.commit(batch({ messages: ids.map(big) }))
        committed.push(...ids.map((n) => `m${n}`))
      } catch (e) {
        error = e as StoreError
      }
    }
    expect(committed.length).toBeGreaterThan(0)
    if (!(error instanceof StoreError)) throw new Error('the quota was never reached')
    expect([error.operation, (error.cause as { code: string }).code]).toEqual(['commit', 'SQLITE_FULL'])
    expect(error.message).toContain(
      'failed to commit: the disk (or the `maxBytes` quota) is full; free space, or let rows drain — a batch that only removes rows still fits; nothing of the batch was written (SQLITE_FULL: database or disk is full)',
    )
    store.commit(batch({ removed: committed.slice(0, 50) })) // the loop drains: removals always fit
    store.commit(batch({ messages: [big(100_000)] })) // and there is room again
    store.close()
    const reopened = sqliteStore({ path })
    expect(reopened.recovered().messages.map((r) => r.id)).toEqual([...committed.slice(50), 'm100000'])
    reopened.close()
  })

  it('no other connection can lock the file while the store holds it: it is refused at once, commits never wait', () => {
    const path = tempJournal()
    const store = sqliteStore({ path })
    const other = new Database(path, { timeout: 0 })
    for (const sql of ['BEGIN IMMEDIATE', 'SELECT count(*) FROM messages']) {
      expect(() => other.exec(sql)).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }))
    }
    other.close()
    store.commit(batch({ messages: [record('b')] }))
    store.close()
    const reopened = new SqliteStore({ path })
    expect(reopened.recovered().messages.map((r) => r.id)).toEqual(['b'])
    reopened.close()
  })

  it('a value JSON cannot take names the row; a closed store refuses', () => {
    const path = tempJournal()
    const store = sqliteStore({ path })
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    const e = storeError(
      () => store.commit(batch({ messages: [record('ok'), record('loop', { checkpoint: cyclic })] })),
      path,
      'commit',
    )
    expect(e.message).toMatch(
      /message `loop` cannot be stored as JSON \(.*circular.*\); nothing of the batch was written$/,
    )
    expect(
      storeError(() => store.commit(batch({ deadLetters: [{ ...letter('d'), payload: 1n }] })), path, 'commit').message,
    ).toContain('dead letter `d` cannot be stored as JSON (Do not know how to serialize a BigInt)')
    store.close()
    expect(storeError(() => store.commit(batch()), path, 'commit').message).toBe(
      `Journal store sqlite:${path} failed to commit: the store is closed; nothing of the batch was written`,
    )
    expect(storeError(() => store.compact(), path, 'commit').message).toContain('the store is closed')
  })
})
