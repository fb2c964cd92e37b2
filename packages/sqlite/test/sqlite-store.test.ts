import { spawnSync } from 'node:child_process'
import { readdirSync, realpathSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, relative } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { batch, EXPIRED_AT, key, letter, record } from '../../core/test/contract/store-fixtures.js'
import { inspectJournal, JournalLockedError, SqliteStore, sqliteStore } from '../src/index.js'
import { removeTempDirs, tempJournal, thrown } from './fixtures.js'

afterEach(removeTempDirs)

/** A second, read-only connection once the store closed: what the `sqlite3` shell would see. */
function peek<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true })
  try {
    return read(db)
  } finally {
    db.close()
  }
}

const files = (path: string) => readdirSync(dirname(path)).sort()
const walBytes = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0

describe('SqliteStore', () => {
  describe('sqliteStore()', () => {
    it('names the store by its absolute path, whatever path it was given', () => {
      const path = tempJournal()
      const store = sqliteStore({ path: relative(process.cwd(), path) })
      expect([store.name, store.path, store.synchronous]).toEqual([`sqlite:${path}`, path, 'normal'])
      store.close()
    })

    it('creates a WAL journal with incremental auto-vacuum, its application id and schema version', () => {
      const path = tempJournal()
      sqliteStore({ path, synchronous: 'full' }).close()
      const got = peek(path, (db) => ({
        journalMode: db.pragma('journal_mode', { simple: true }),
        autoVacuum: db.pragma('auto_vacuum', { simple: true }),
        applicationId: db.pragma('application_id', { simple: true }),
        meta: db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(),
        tables: db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all(),
      }))
      expect(got).toEqual({
        journalMode: 'wal',
        autoVacuum: 2, // INCREMENTAL
        applicationId: 0x464c4f57,
        meta: '1',
        tables: ['dead_letters', 'keys', 'messages', 'meta'],
      })
    })

    it('reopens an existing journal as it is (no second schema, same rows)', () => {
      const path = tempJournal()
      const first = sqliteStore({ path })
      first.commit(batch({ messages: [record('a')] }))
      first.close()
      const second = sqliteStore({ path })
      expect(second.recovered().messages.map((r) => r.id)).toEqual(['a'])
      expect(second.recovered()).toBe(second.recovered())
      second.close()
    })
  })

  describe('commit()', () => {
    it('keeps a replaced row under its seq (ON CONFLICT DO UPDATE, not INSERT OR REPLACE)', () => {
      const path = tempJournal()
      const first = sqliteStore({ path })
      first.commit(batch({ messages: [record('a'), record('b')] }))
      first.close()
      const before = peek(path, (db) => db.prepare('SELECT seq, id FROM messages ORDER BY seq').raw().all())
      const second = sqliteStore({ path })
      second.commit(batch({ messages: [record('a', { state: 'delayed', dueAtEpochMs: 99 })] }))
      expect(second.commits).toBe(1)
      second.close()
      const after = peek(path, (db) =>
        db.prepare('SELECT seq, id, state, due_at FROM messages ORDER BY seq').raw().all(),
      )
      expect(after).toEqual([
        [...(before[0] as unknown[]), 'delayed', 99],
        [...(before[1] as unknown[]), 'queued', null],
      ])
    })

    it('writes batches of every size through its multi-row statements in order, as one row at a time would', () => {
      // Sizes around the statement slices (128 rows a run, the remainder in powers of two), with
      // replaced rows and removals in the same batches: the file must hold what a row-by-row model holds.
      const path = tempJournal()
      const store = sqliteStore({ path })
      const model = new Map<string, string>()
      let next = 0
      for (const size of [0, 1, 2, 3, 127, 128, 129, 255, 300, 1000]) {
        const fresh = Array.from({ length: size }, () => `m${next++}`)
        const held = [...model.keys()]
        const replaced = held.filter((_, i) => i % 7 === 0).slice(0, size)
        const removed = held.filter((_, i) => i % 5 === 1).slice(0, size)
        const messages = [...fresh, ...replaced.filter((id) => !removed.includes(id))]
        store.commit(
          batch({
            messages: messages.map((id) => record(id, { state: size % 2 === 0 ? 'queued' : 'delayed' })),
            removed,
          }),
        )
        for (const id of removed) model.delete(id)
        for (const id of messages) model.set(id, size % 2 === 0 ? 'queued' : 'delayed')
      }
      store.close()
      const rows = peek(path, (db) => db.prepare('SELECT id, state FROM messages ORDER BY seq').raw().all())
      expect(rows).toEqual([...model.entries()].map(([id, state]) => [id, state]))
    })

    it('stores each row as JSON text the sqlite3 shell can query', () => {
      const path = tempJournal()
      const store = sqliteStore({ path })
      store.commit(batch({ messages: [record('a', { hops: 2 })], deadLetters: [letter('d')], keys: [key('k')] }))
      store.close()
      const got = peek(path, (db) => [
        db.prepare("SELECT json_extract(record, '$.hops') FROM messages WHERE id = 'a'").pluck().get(),
        db.prepare("SELECT json_extract(letter, '$.reason') FROM dead_letters").pluck().get(),
        db.prepare("SELECT json_extract(record, '$.entry.state') FROM keys").pluck().get(),
      ])
      expect(got).toEqual([2, 'exhausted', 'done'])
    })
  })

  describe('expired keys', () => {
    it('are deleted from the file at open, and swept after commits once 30 s passed', () => {
      let now = 1_000_000
      const path = tempJournal()
      const open = () => sqliteStore({ path, wallNow: () => now })
      const count = () => peek(path, (db) => db.prepare('SELECT key FROM keys ORDER BY key').pluck().all())
      const first = open()
      first.commit(batch({ keys: [key('old', EXPIRED_AT), key('a', now + 10_000), key('b', now + 100_000)] }))
      first.commit(batch())
      first.close()
      expect(count()).toEqual(['a', 'b', 'old']) // a commit does not sweep before its time (nor does close)
      const second = open() // deletes `old` at open
      expect(second.recovered().keys.map((k) => k.key)).toEqual(['a', 'b'])
      now += 30_000
      second.commit(batch()) // sweeps `a`
      second.commit(batch({ keys: [key('c', now + 1)] }))
      second.close()
      expect(count()).toEqual(['b', 'c'])
      now += 2
      const third = open()
      expect(third.recovered().keys.map((k) => k.key)).toEqual(['b'])
      third.close()
      expect(count()).toEqual(['b'])
    })
  })

  describe('compact()', () => {
    it('gives the pages of a drained backlog back and truncates the -wal file', () => {
      const path = tempJournal()
      const store = sqliteStore({ path })
      const ids = Array.from({ length: 20_000 }, (_, i) => `m${i}`)
      store.commit(batch({ messages: ids.map((id) => record(id)) }))
      store.commit(batch({ removed: ids.slice(0, 19_000) }))
      const full = statSync(path).size
      const report = store.compact()
      expect(report.checkpointed).toBe(true)
      expect(report.freedPages).toBeGreaterThan(0)
      expect(walBytes(path)).toBe(0)
      expect(statSync(path).size).toBeLessThan(full / 4)
      expect(store.compactionError).toBeUndefined()
      store.close()
      const reopened = sqliteStore({ path })
      expect(reopened.recovered().messages.length).toBe(1000)
      reopened.close()
    })
  })

  describe('close()', () => {
    it('checkpoints and removes the -wal file and the owner record; is idempotent', () => {
      const path = tempJournal()
      const store = sqliteStore({ path })
      store.commit(batch({ messages: [record('a')] }))
      expect(walBytes(path)).toBeGreaterThan(0)
      // No -shm: an exclusive connection keeps its WAL index in memory.
      expect(files(path)).toEqual(['journal.db', 'journal.db-owner', 'journal.db-wal'])
      store.close()
      store.close()
      expect([store.closed, walBytes(path), files(path)]).toEqual([true, 0, ['journal.db']])
    })
  })

  describe('a journal an earlier release left after a kill -9', () => {
    it('recovers what its non-exclusive connection left in the -wal file; the stale -shm file is left unused', () => {
      const path = tempJournal()
      sqliteStore({ path }).close()
      const killed = spawnSync(process.execPath, [
        '-e',
        `const db = new (require(process.argv[1]))(process.argv[2])
         db.prepare("INSERT INTO messages (id, record) VALUES ('x', ?)").run(process.argv[3])
         process.kill(process.pid, 'SIGKILL')`,
        createRequire(import.meta.url).resolve('better-sqlite3'),
        path,
        JSON.stringify(record('x')),
      ])
      expect(killed.signal).toBe('SIGKILL')
      expect(files(path)).toEqual(['journal.db', 'journal.db-shm', 'journal.db-wal'])
      const store = sqliteStore({ path })
      expect(store.recovered().messages).toEqual([record('x')])
      store.close()
      expect(files(path)).toEqual(['journal.db', 'journal.db-shm'])
    })
  })
})

describe('inspectJournal()', () => {
  it('is refused at once while a store holds the file, naming it; counts what a restart would recover once it closed', () => {
    const path = tempJournal()
    const store = new SqliteStore({ path })
    store.commit(
      batch({
        messages: [
          record('a'),
          record('b', { state: 'delayed' }),
          record('c', { state: 'retry-scheduled' }),
          record('d'),
        ],
        deadLetters: [letter('x')],
        keys: [key('live'), key('old', EXPIRED_AT)],
      }),
    )
    const e = thrown(() => inspectJournal(path))
    expect(e).toBeInstanceOf(JournalLockedError)
    expect(e.message).toContain(
      `failed to open: the file ${realpathSync(path)} is open by another store: pid ${process.pid}`,
    )
    store.close()
    const summary = inspectJournal(path)
    expect(summary).toMatchObject({
      path,
      schemaVersion: 1,
      messages: { queued: 2, delayed: 1, 'retry-scheduled': 1 },
      deadLetters: 1,
      keys: 1,
      expiredKeys: 1,
    })
    expect(summary.bytes.database).toBeGreaterThan(0)
  })

  it('refuses a missing file or a file that is not a journal', () => {
    const path = tempJournal()
    expect(() => inspectJournal(path)).toThrow(`Journal store sqlite:${path} failed to open: the file cannot be opened`)
  })
})
