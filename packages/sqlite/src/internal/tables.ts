/**
 * The journal's rows: multi-row prepared statements per table and kind, the batch encoded to JSON before the
 * transaction starts (a value JSON cannot take fails the batch before anything is written), and the
 * whole contents read back in first-journaled order.
 *
 * @internal
 * @module
 */
import type { DeadLetter, JournalBatch, JournalRecord, KeyRecord, StoreContents } from '@flowing/core'
import { StoreError } from '@flowing/core'
import type Database from 'better-sqlite3'
import { MultiRow, placeholders } from './multi-row.js'

/** A batch as bound parameters, each table's rows flat (every row's JSON already made). */
export interface EncodedBatch {
  readonly messages: readonly unknown[]
  readonly removed: readonly string[]
  readonly deadLetters: readonly unknown[]
  readonly deadLettersRemoved: readonly string[]
  readonly keys: readonly unknown[]
  readonly keysRemoved: readonly string[]
}

/**
 * Encodes a batch; every JSON text is made here, outside the transaction.
 *
 * @throws StoreError (`commit`) naming the row that JSON cannot take (a BigInt, a cycle)
 */
export function encodeBatch(store: string, batch: JournalBatch): EncodedBatch {
  const messages: unknown[] = []
  for (const r of batch.messages) {
    messages.push(r.id, r.type, r.state, r.dueAtEpochMs ?? null, json(store, 'message', r.id, r))
  }
  const deadLetters: unknown[] = []
  for (const l of batch.deadLetters) deadLetters.push(l.id, l.type, l.atEpochMs, json(store, 'dead letter', l.id, l))
  const keys: unknown[] = []
  for (const k of batch.keys) keys.push(k.key, k.expiresAtEpochMs, json(store, 'key', k.key, k))
  return {
    messages,
    removed: batch.removed,
    deadLetters,
    deadLettersRemoved: batch.deadLettersRemoved,
    keys,
    keysRemoved: batch.keysRemoved,
  }
}

function json(store: string, what: string, id: string, value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    // The first line: V8's message for a cycle goes on with an ASCII drawing of it.
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]
    throw new StoreError(
      store,
      'commit',
      `${what} \`${id}\` cannot be stored as JSON (${reason}); nothing of the batch was written`,
      error,
    )
  }
}

/** The prepared statements of one connection, and the transaction that applies a batch. */
export class Tables {
  /** Applies an encoded batch in one `BEGIN IMMEDIATE` transaction (rolled back if any row fails). */
  readonly write: (batch: EncodedBatch) => void
  readonly #db: Database.Database
  // The sweep of expired keys: a range scan of `keys_by_expiry`, cheap when nothing expired.
  readonly #expire: Database.Statement<[number]>

  constructor(db: Database.Database) {
    this.#db = db
    this.#expire = db.prepare('DELETE FROM keys WHERE expires_at <= ?')
    const apply = upserts(db)
    this.write = db.transaction(apply).immediate
  }

  /** Deletes the keys that expired at `now`; returns how many. */
  expireKeys(now: number): number {
    return this.#expire.run(now).changes
  }

  /**
   * Everything the journal holds, keys expired at `now` left out.
   *
   * @throws StoreError (`recover`) for a row that is not valid JSON (an edited or damaged journal)
   */
  read(store: string, now: number): StoreContents {
    return {
      messages: this.#readTable<JournalRecord>(store, 'messages', 'id', 'record', ''),
      deadLetters: this.#readTable<DeadLetter>(store, 'dead_letters', 'id', 'letter', ''),
      keys: this.#readTable<KeyRecord>(store, 'keys', 'key', 'record', `WHERE expires_at > ${Number(now)}`),
    }
  }

  /**
   * One table's JSON column in `seq` order, parsed. Only the JSON is fetched (fetching the id too
   * doubles the read of a 100k-row journal); the id is looked up for the error of a row that fails.
   */
  #readTable<T>(store: string, table: string, id: string, column: string, where: string): T[] {
    const order = `FROM ${table} ${where} ORDER BY seq`
    const texts = this.#db.prepare(`SELECT ${column} ${order}`).pluck().all() as string[]
    const out: T[] = new Array(texts.length)
    for (let i = 0; i < texts.length; i++) {
      try {
        out[i] = JSON.parse(texts[i] as string) as T
      } catch (error) {
        const name = this.#db.prepare(`SELECT ${id} ${order} LIMIT 1 OFFSET ?`).pluck().get(i)
        const problem = `row \`${String(name)}\` of table ${table} is not valid JSON; the journal was edited or damaged`
        throw new StoreError(store, 'recover', problem, error)
      }
    }
    return out
  }
}

/**
 * The body of the batch transaction: removals first, then the upserts (an id is in one or the other),
 * each as multi-row statements (`multi-row.ts`).
 */
function upserts(db: Database.Database): (batch: EncodedBatch) => void {
  // ON CONFLICT … DO UPDATE keeps the row's seq (its first-journaled place); INSERT OR REPLACE would
  // delete the row and give it a new one at the end. Rows of one statement are inserted in order.
  const putMessage = new MultiRow(
    db,
    (n) => `INSERT INTO messages (id, type, state, due_at, record) VALUES ${placeholders(n, 5)}
     ON CONFLICT (id) DO UPDATE SET type = excluded.type, state = excluded.state, due_at = excluded.due_at, record = excluded.record`,
    5,
  )
  const putLetter = new MultiRow(
    db,
    (n) => `INSERT INTO dead_letters (id, type, at, letter) VALUES ${placeholders(n, 4)}
     ON CONFLICT (id) DO UPDATE SET type = excluded.type, at = excluded.at, letter = excluded.letter`,
    4,
  )
  const putKey = new MultiRow(
    db,
    (n) => `INSERT INTO keys (key, expires_at, record) VALUES ${placeholders(n, 3)}
     ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record`,
    3,
  )
  const removeMessage = new MultiRow(db, (n) => `DELETE FROM messages WHERE id IN ${placeholders(1, n)}`, 1)
  const removeLetter = new MultiRow(db, (n) => `DELETE FROM dead_letters WHERE id IN ${placeholders(1, n)}`, 1)
  const removeKey = new MultiRow(db, (n) => `DELETE FROM keys WHERE key IN ${placeholders(1, n)}`, 1)
  return (batch) => {
    removeMessage.run(batch.removed)
    removeLetter.run(batch.deadLettersRemoved)
    removeKey.run(batch.keysRemoved)
    putMessage.run(batch.messages)
    putLetter.run(batch.deadLetters)
    putKey.run(batch.keys)
  }
}
