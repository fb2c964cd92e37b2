/**
 * The reference journal store: in memory, so it survives no crash of its process — but it behaves
 * like a real one (every commit is copied through JSON, a reopened store sees only what was
 * committed), which makes it the store of tests and of the store contract.
 *
 * @module
 */
import type { DeadLetter } from '../contracts/failures.js'
import type { JournalBatch, JournalRecord, KeyRecord, Store, StoreContents } from '../contracts/store.js'

interface Tables {
  readonly messages: Map<string, string>
  readonly deadLetters: Map<string, string>
  readonly keys: Map<string, string>
}

/**
 * A {@link Store} in memory. {@link MemoryStore.reopen} plays a restart: it returns a new store over
 * what was committed, and the old one refuses every later commit (a crashed process writes nothing).
 *
 * @group Journal
 */
export class MemoryStore implements Store {
  readonly name: string
  readonly #tables: Tables
  readonly #clock: () => number
  #closed = false
  #superseded = false
  #commits = 0

  /**
   * @param name - the store's name in errors and events
   * @param wallNow - the wall clock that expires finished keys (ms since the epoch)
   */
  constructor(name = 'memory', wallNow: () => number = Date.now) {
    this.name = name
    this.#clock = wallNow
    this.#tables = { messages: new Map(), deadLetters: new Map(), keys: new Map() }
  }

  /** Batches committed. */
  get commits(): number {
    return this.#commits
  }

  /** Rows held: unfinished messages, dead letters, finished keys. */
  get rows(): { messages: number; deadLetters: number; keys: number } {
    const t = this.#tables
    return { messages: t.messages.size, deadLetters: t.deadLetters.size, keys: t.keys.size }
  }

  recovered(): StoreContents {
    const now = this.#clock()
    const t = this.#tables
    const keys = [...t.keys.values()].map((text) => JSON.parse(text) as KeyRecord)
    return {
      messages: [...t.messages.values()].map((text) => JSON.parse(text) as JournalRecord),
      deadLetters: [...t.deadLetters.values()].map((text) => JSON.parse(text) as DeadLetter),
      keys: keys.filter((k) => k.expiresAtEpochMs > now),
    }
  }

  commit(batch: JournalBatch): void {
    if (this.#superseded) throw new Error(`${this.name} was reopened: this handle may not write`)
    if (this.#closed) throw new Error(`${this.name} is closed`)
    // Serialize first: a value JSON cannot take fails the batch before anything changed.
    const messages = batch.messages.map((r) => [r.id, JSON.stringify(r)] as const)
    const letters = batch.deadLetters.map((l) => [l.id, JSON.stringify(l)] as const)
    const keys = batch.keys.map((k) => [k.key, JSON.stringify(k)] as const)
    const t = this.#tables
    apply(t.messages, messages, batch.removed)
    apply(t.deadLetters, letters, batch.deadLettersRemoved)
    apply(t.keys, keys, batch.keysRemoved)
    this.#commits++
  }

  close(): void {
    this.#closed = true
  }

  /** A restart: a new store over what was committed; this one may not write any more. */
  reopen(): MemoryStore {
    this.#superseded = true
    const next = new MemoryStore(this.name, this.#clock)
    for (const name of ['messages', 'deadLetters', 'keys'] as const) {
      for (const [id, text] of this.#tables[name]) next.#tables[name].set(id, text)
    }
    return next
  }
}

function apply(table: Map<string, string>, rows: readonly (readonly [string, string])[], removed: readonly string[]) {
  for (const id of removed) table.delete(id)
  // A replaced row keeps its place (the first-journaled order): Map.set on a present key does.
  for (const [id, text] of rows) table.set(id, text)
}
