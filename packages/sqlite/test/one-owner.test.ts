/**
 * One store per journal, for real: the store holds SQLite's exclusive lock on its file, so a second
 * store is refused at once through any path (a symlink, a hard link, `..`) and from any process, with a
 * `JournalLockedError` naming the file and the owner; a refused open leaves the directory and the file
 * as they were; the lock goes with its owner (a close, a `kill -9`). Real files, real processes.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { linkSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { batch, record } from '../../core/test/contract/store-fixtures.js'
import { JournalLockedError, type JournalOwner, sqliteStore } from '../src/index.js'
import { removeTempDirs, snapshot, storeError, tempDir } from './fixtures.js'
import { bundleChild } from './process/bundle.js'

afterEach(removeTempDirs)

/** Well under the default `busyTimeoutMs` (5000): a refused open does not wait for the lock. */
const AT_ONCE_MS = 1000

/** The JournalLockedError `open` throws (see {@link storeError}), and how long `open` took. */
function refused(open: () => unknown, path: string): { error: JournalLockedError; ms: number } {
  const started = performance.now()
  const error = storeError(open, resolve(path), 'open', JournalLockedError)
  return { error, ms: performance.now() - started }
}

/** The message of a refusal naming `owner`, its time written `<time>` (see {@link timeless}). */
function ownedMessage(path: string, owner: Omit<JournalOwner, 'openedAtEpochMs'>, here: boolean): string {
  const who = `pid ${owner.pid} on host ${owner.host}${here ? ' (this process)' : ''}`
  return (
    `Journal store sqlite:${resolve(path)} failed to open: the file ${realpathSync(path)} is open by another ` +
    `store: ${who} opened it as ${owner.path} at <time>; one store per journal — close that store first, ` +
    'or give this one another file'
  )
}

/** `message` with its ISO time replaced by `<time>`. */
const timeless = (message: string) => message.replace(/ at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z;/, ' at <time>;')

/** A journal with messages `a` and `b`, open; its directory and path. */
function ownedJournal() {
  const dir = tempDir()
  const path = join(dir, 'journal.db')
  const store = sqliteStore({ path })
  store.commit(batch({ messages: [record('a'), record('b')] }))
  return { dir, path, store }
}

const ids = (store: { recovered(): { messages: readonly { id: string }[] } }) =>
  store.recovered().messages.map((r) => r.id)

describe('a second store over an open journal, in this process', () => {
  // Each makes another path to `<dir>/journal.db`.
  const aliases: [string, (dir: string) => string][] = [
    ['a symlink', (dir) => link(symlinkSync, join(dir, 'journal.db'), join(dir, 'alias.db'))],
    ['a hard link in another directory', (dir) => hardLinkIn(join(dir, 'elsewhere'), join(dir, 'journal.db'))],
    ['a `..` path', (dir) => upAndBack(dir)],
  ]

  it.each(aliases)(
    'through %s: refused at once, naming the file and this process; the first store works on',
    (_, alias) => {
      const { dir, path, store } = ownedJournal()
      const other = alias(dir)
      const before = snapshot(dir, path)
      const opened = Date.now()
      const { error, ms } = refused(() => sqliteStore({ path: other }), other)
      expect(ms).toBeLessThan(AT_ONCE_MS)
      expect(error.file).toBe(realpathSync(other)) // a hard link is a name of the file as good as any
      expect(error.owner).toEqual({ pid: process.pid, host: hostname(), path, openedAtEpochMs: expect.any(Number) })
      expect(error.owner?.openedAtEpochMs).toBeLessThanOrEqual(opened)
      expect(timeless(error.message)).toBe(ownedMessage(other, { pid: process.pid, host: hostname(), path }, true))
      expect(snapshot(dir, path)).toEqual(before)

      store.commit(batch({ messages: [record('c')] }))
      store.close()
      const next = sqliteStore({ path: other }) // accepted once the first closed, through the other path too
      expect(ids(next)).toEqual(['a', 'b', 'c'])
      next.close()
    },
  )

  it('a connection that is not a store holds the file: the lock refuses at once, and says the owner is unknown', () => {
    const dir = tempDir()
    const path = join(dir, 'journal.db')
    sqliteStore({ path }).close()
    const other = new Database(path)
    other.pragma('locking_mode = EXCLUSIVE')
    other.exec('BEGIN EXCLUSIVE; COMMIT')
    const before = snapshot(dir, path)
    const { error, ms } = refused(() => sqliteStore({ path }), path)
    expect(ms).toBeLessThan(AT_ONCE_MS)
    expect(error.owner).toBeUndefined()
    expect((error.cause as { code: string }).code).toBe('SQLITE_BUSY')
    expect(error.message).toBe(
      `Journal store sqlite:${path} failed to open: the file ${realpathSync(path)} is locked by another connection, ` +
        'which did not record its owner beside the file (a store that opened it through a hard link or a ' +
        'bind-mounted file, a store of an earlier release, or another program: the sqlite3 shell, a backup); ' +
        'one store per journal — close it first',
    )
    expect(snapshot(dir, path)).toEqual(before)
    other.close()
    sqliteStore({ path }).close()
  })
})

/** `<dir>/sub/../journal.db`, through a new directory `sub` (written out: `join` would fold it). */
function upAndBack(dir: string): string {
  mkdirSync(join(dir, 'sub'))
  return `${dir}/sub/../journal.db`
}

/** A hard link to `target` in a new directory `dir`. */
function hardLinkIn(dir: string, target: string): string {
  mkdirSync(dir)
  return link(linkSync, target, join(dir, 'hard.db'))
}

/** `make(target, path)` (symlinkSync, linkSync), then `path`. */
function link(make: (target: string, path: string) => void, target: string, path: string): string {
  make(target, path)
  return path
}

/** What `open-child.ts` prints when its open fails. */
interface ChildRefusal {
  readonly isStoreError: boolean
  readonly isLocked: boolean
  readonly name: string
  readonly operation: string
  readonly cause: string
  readonly message: string
  readonly ms: number
}

describe('a second store over an open journal, across processes', () => {
  const bundleDir = mkdtempSync(join(tmpdir(), 'flowing-sqlite-child-'))
  let ownerChild = ''
  let openChild = ''
  beforeAll(async () => {
    const entry = (name: string) => fileURLToPath(new URL(`./process/${name}.ts`, import.meta.url))
    ownerChild = await bundleChild(entry('owner-child'), bundleDir, 'owner')
    openChild = await bundleChild(entry('open-child'), bundleDir, 'open')
  }, 30_000)
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }))
  // Owners still running when a test ends (a failed assertion leaves one behind).
  const children: ChildProcess[] = []
  afterEach(() => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })

  /** A child process owning the journal at `path`, once it committed `ids`. */
  async function startOwner(path: string, ids: string[]) {
    const child = spawn(process.execPath, [ownerChild, path, ...ids], { stdio: ['pipe', 'pipe', 'pipe'] })
    children.push(child)
    let out = ''
    let err = ''
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    const exited = new Promise<void>((done) => child.once('exit', () => done()))
    await new Promise<void>((owned, failed) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        if (out.includes('owned\n')) owned()
      })
      child.once('exit', (code, signal) => failed(new Error(`owner exited (${code ?? signal}) before owning\n${err}`)))
    })
    return {
      pid: child.pid as number,
      close: async () => {
        child.stdin.write('close\n')
        await exited
        expect(out).toContain('closed\n')
      },
      kill: async () => {
        child.kill('SIGKILL')
        await exited
      },
    }
  }

  function openInChild(path: string): ChildRefusal {
    const run = spawnSync(process.execPath, [openChild, path], { encoding: 'utf8', timeout: 20_000 })
    if (run.status !== 0) throw new Error(`child failed (${run.status ?? run.signal}): ${run.stderr}`)
    return JSON.parse(run.stdout) as ChildRefusal
  }

  it('an owner in another process (opened through a symlink): refused at once, naming its pid, host, path and time; accepted after it closed', async () => {
    const dir = tempDir()
    const path = join(dir, 'journal.db')
    const alias = link(symlinkSync, path, join(dir, 'alias.db'))
    const started = Date.now()
    const owner = await startOwner(alias, ['a', 'b'])
    const before = snapshot(dir, path)
    const { error, ms } = refused(() => sqliteStore({ path }), path)
    expect(ms).toBeLessThan(AT_ONCE_MS)
    expect(error.owner).toEqual({ pid: owner.pid, host: hostname(), path: alias, openedAtEpochMs: expect.any(Number) })
    expect(error.owner?.openedAtEpochMs).toBeGreaterThanOrEqual(started)
    expect(timeless(error.message)).toBe(ownedMessage(path, { pid: owner.pid, host: hostname(), path: alias }, false))
    expect((error.cause as { code: string }).code).toBe('SQLITE_BUSY')
    expect(snapshot(dir, path)).toEqual(before)

    await owner.close()
    expect(readdirSync(dir).sort()).toEqual(['alias.db', 'journal.db']) // no -wal, -shm or -owner left
    const store = sqliteStore({ path })
    expect(ids(store)).toEqual(['a', 'b'])
    store.close()
  })

  it('after kill -9 of the owner, the next open is accepted and recovers its messages; a child is then refused, naming this process', async () => {
    const dir = tempDir()
    const path = join(dir, 'journal.db')
    const owner = await startOwner(path, ['a', 'b', 'c'])
    await owner.kill()
    expect(readdirSync(dir).sort()).toEqual(['journal.db', 'journal.db-owner', 'journal.db-wal']) // as it died

    const store = sqliteStore({ path })
    expect(ids(store)).toEqual(['a', 'b', 'c'])
    const before = snapshot(dir, path)
    const got = openInChild(path)
    expect(got).toMatchObject({
      isStoreError: true,
      isLocked: true,
      name: 'JournalLockedError',
      operation: 'open',
      cause: 'SQLITE_BUSY',
    })
    expect(got.ms).toBeLessThan(AT_ONCE_MS)
    expect(timeless(got.message)).toBe(ownedMessage(path, { pid: process.pid, host: hostname(), path }, false))
    expect(snapshot(dir, path)).toEqual(before)
    store.commit(batch({ removed: ['a'] }))
    store.close()
    expect(readdirSync(dir)).toEqual(['journal.db'])
  })

  it('an owner in another process that opened it through a hard link elsewhere: refused at once, the owner said to be unknown', async () => {
    const dir = tempDir()
    const path = join(dir, 'journal.db')
    sqliteStore({ path }).close()
    const owner = await startOwner(link(linkSync, path, join(tempDir(), 'hard.db')), ['a'])
    const before = snapshot(dir, path)
    const { error, ms } = refused(() => sqliteStore({ path }), path)
    expect(ms).toBeLessThan(AT_ONCE_MS)
    expect(error.owner).toBeUndefined()
    expect(error.message).toContain(`the file ${realpathSync(path)} is locked by another connection, which did not`)
    expect(snapshot(dir, path)).toEqual(before)
    await owner.close()
    const store = sqliteStore({ path })
    expect(ids(store)).toEqual(['a'])
    store.close()
  })
})
