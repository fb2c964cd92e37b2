/**
 * A batch as the commit statement's parameters `$5`–`$15`: for each table, the ids it removes (a
 * `text[]`), the ids it writes and their rows (JSON arrays), and the messages' idempotency keys — so a
 * batch of any size is one statement.
 *
 * @module
 */
import type { DeadLetter, JournalBatch, JournalRecord, KeyRecord } from '@flowing/core'

/**
 * The parameters of one batch.
 *
 * @remarks
 * A batch names an id at most once (the contract); a repeated id is tolerated anyway — the last
 * record wins, and an id both written and removed is written (its row keeps its place) — because the
 * statement could not write one row twice.
 *
 * @throws Error when a record cannot be written as JSON (a BigInt or a cycle in a checkpoint)
 */
export function batchParams(batch: JournalBatch): (string | string[])[] {
  const messages = lastById(batch.messages, (r: JournalRecord) => r.id)
  const letters = lastById(batch.deadLetters, (l: DeadLetter) => l.id)
  const keys = lastById(batch.keys, (k: KeyRecord) => k.key)
  const keyRecords = [...keys.values()]
  return [
    batch.removed.filter((id) => !messages.has(id)),
    JSON.stringify([...messages.keys()]),
    JSON.stringify([...messages.values()]),
    batch.deadLettersRemoved.filter((id) => !letters.has(id)),
    JSON.stringify([...letters.keys()]),
    JSON.stringify([...letters.values()]),
    batch.keysRemoved.filter((k) => !keys.has(k)).map(keyColumn),
    JSON.stringify(keyRecords.map((k) => keyColumn(k.key))),
    JSON.stringify(keyRecords.map((k) => k.expiresAtEpochMs)), // Infinity becomes null: never expires
    JSON.stringify(keyRecords),
    JSON.stringify(idempotencyKeys(messages.values())),
  ]
}

// The `idem_key` column of each written message, in order: null for none, and for a key an earlier
// message of the batch has (the column is unique; the loop never writes two, but a batch must not fail).
function idempotencyKeys(records: Iterable<JournalRecord>): (string | null)[] {
  const seen = new Set<string>()
  return Array.from(records, (r) => {
    if (r.idempotencyKey === undefined || seen.has(r.idempotencyKey)) return null
    seen.add(r.idempotencyKey)
    return keyColumn(r.idempotencyKey)
  })
}

/**
 * The `keys.key` column of an idempotency key: the key itself — unless it holds what a `text` column
 * cannot (NUL, a lone surrogate) or starts with the escape `\`; those are stored as `\` and their JSON,
 * so every key has its own row.
 */
export function keyColumn(key: string): string {
  if (!UNSTORABLE.test(key) && !key.startsWith('\\')) return key
  return `\\${JSON.stringify(key)}`
}

// NUL, or a surrogate without its pair: what UTF-8 text cannot hold.
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function lastById<T>(rows: readonly T[], id: (row: T) => string): Map<string, T> {
  const byId = new Map<string, T>()
  for (const row of rows) byId.set(id(row), row)
  return byId
}
