/**
 * The journals a Flowing row runs on: none (the in-memory loop), `MemoryStore`, SQLite (NORMAL and
 * FULL, in a temp dir) — each opened fresh for every run, with what the tables need: a commit count, the
 * file's size (database + `-wal`), and, after the loop stopped, what the journal still holds (which
 * must be nothing).
 *
 * @module
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryStore, type Store } from '@flowing/core'
import { inspectJournal, type SynchronousMode, sqliteStore } from '@flowing/sqlite'

/** One opened journal, for one run. */
export interface OpenJournal {
  /** The loop's `store` option (`undefined`: no store). */
  readonly store: Store | undefined
  /** What the loop wrote to it so far. */
  readonly written: Written
  /** Bytes on disk now (database + `-wal`), if it is a file. */
  bytes(): number | undefined
  /** Refreshes what {@link OpenJournal.bytes} returns, for a journal that must be asked (a server). */
  measure?(): Promise<void>
  /** After the loop stopped (and closed the store): unfinished messages the journal still holds. */
  leftOver(): Promise<number>
  /** Removes what the run left on disk. */
  dispose(): Promise<void>
}

/** A kind of journal: a row of the tables. */
export interface JournalKind {
  readonly id: string
  readonly label: string
  /** The target the issue sets for this row, if any. */
  readonly target?: Target
  /** Opens a fresh journal for one run. */
  open(): Promise<OpenJournal>
  /** The loop's `maxCrashes` on this row (the default, 3, when absent). */
  readonly maxCrashes?: number
}

/** A throughput target: at least `msgsPerSec`, and at least `ofInMemory` × the in-memory row. */
export interface Target {
  readonly msgsPerSec: number
  readonly ofInMemory?: number
}

/** What a counted store wrote: batches, message rows put (inserted or replaced), rows removed. */
export interface Written {
  commits: number
  puts: number
  removes: number
}

/** Wraps `store` so every commit and every message row it writes is counted (nothing else changes). */
export function counting(store: Store): { store: Store; written: Written } {
  const written: Written = { commits: 0, puts: 0, removes: 0 }
  const counted: Store = {
    name: store.name,
    recovered: () => store.recovered(),
    commit(batch) {
      written.commits++
      written.puts += batch.messages.length
      written.removes += batch.removed.length
      return store.commit(batch)
    },
    close: () => store.close(),
  }
  if (store.watch !== undefined) Object.assign(counted, { watch: store.watch.bind(store) })
  return { store: counted, written }
}

/** A directory of its own under the system's temp dir. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `flowing-${prefix}-`))
}

/** Bytes of `path` (0 if absent). */
export function fileBytes(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** Database and `-wal` bytes of an SQLite journal. */
export function sqliteBytes(path: string): { db: number; wal: number } {
  return { db: fileBytes(path), wal: fileBytes(`${path}-wal`) }
}

/** No store: the loop as it runs without a journal — the baseline. */
export const inMemory: JournalKind = {
  id: 'in-memory',
  label: 'in-memory (no store)',
  async open() {
    return {
      store: undefined,
      written: { commits: 0, puts: 0, removes: 0 },
      bytes: () => undefined,
      leftOver: async () => 0,
      dispose: async () => {},
    }
  },
}

/** `MemoryStore`: the journal's whole cost (records, JSON copies) without a disk. */
export const memoryStore: JournalKind = {
  id: 'memory-store',
  label: 'MemoryStore',
  async open() {
    const memory = new MemoryStore()
    const { store, written } = counting(memory)
    return {
      store,
      written,
      bytes: () => undefined,
      leftOver: async () => memory.rows.messages,
      dispose: async () => {},
    }
  },
}

/**
 * SQLite in a fresh temp dir, with `synchronous` set; `guardOff`: the loop's crash-loop guard turned
 * off (`maxCrashes: Infinity`), to show what the guard costs beside the default row.
 */
export function sqliteJournal(synchronous: SynchronousMode, guardOff = false): JournalKind {
  return {
    id: `sqlite-${synchronous}${guardOff ? '-no-guard' : ''}`,
    label: `SQLite, synchronous: '${synchronous}'${guardOff ? ', maxCrashes: Infinity' : ''}`,
    ...(guardOff ? { maxCrashes: Number.POSITIVE_INFINITY } : { target: { msgsPerSec: 100_000, ofInMemory: 0.1 } }),
    async open() {
      const dir = tempDir('sqlite')
      const path = join(dir, 'journal.db')
      const sqlite = sqliteStore({ path, synchronous })
      const { store, written } = counting(sqlite)
      return {
        store,
        written,
        bytes: () => {
          const { db, wal } = sqliteBytes(path)
          return db + wal
        },
        async leftOver() {
          const { messages } = inspectJournal(path)
          return messages.queued + messages.delayed + messages['retry-scheduled']
        },
        async dispose() {
          sqlite.close()
          rmSync(dir, { recursive: true, force: true })
        },
      }
    },
  }
}
