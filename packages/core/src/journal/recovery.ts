/**
 * Recovery: at `start()`, what the store kept — dead letters, finished idempotency keys, unfinished
 * messages — comes back into the loop, the messages through `restore()` (a crash recovers the way a
 * planned stop's snapshot does). Rows a shared store takes over later arrive the same way.
 *
 * @module
 */
import { StoreError } from '../errors.js'
import type { MessageMap } from '../message.js'
import { type RestoreParts, restoreSnapshot } from '../shutdown/restore.js'
import type { Journal } from './journal.js'
import type { JournaledKeys } from './keys.js'
import { snapshotOf } from './records.js'
import type { StoreContents } from './store.js'

const ADOPT_RETRY_MS = 1_000

/** What recovery touches. */
export interface RecoveryParts<M extends MessageMap> extends RestoreParts<M> {
  readonly journal: Journal<M>
  readonly keys: JournaledKeys | undefined
}

/**
 * Recovers the journal once (the first `start()`).
 * @throws StoreError when the store cannot be read; SnapshotError when the loop cannot take what it
 * holds (an unregistered type, no room) — nothing is recovered then, and `start()` may be called again
 */
export function recoverJournal<M extends MessageMap>(parts: RecoveryParts<M>): void {
  const { journal } = parts
  if (journal.recovered) return
  const store = journal.store
  let contents: StoreContents
  try {
    contents = store.recovered()
  } catch (error) {
    throw new StoreError(store.name, 'recover', error instanceof Error ? error.message : String(error), error)
  }
  take(parts, contents)
  journal.recovered = true
  store.watch?.((adopted) => adopt(parts, adopted))
}

// The messages first (all or nothing: a restore that throws leaves the loop as it was), then letters and keys.
function take<M extends MessageMap>(parts: RecoveryParts<M>, contents: StoreContents): void {
  if (contents.messages.length > 0) {
    restoreSnapshot(parts, snapshotOf(contents, parts.clock), 0) // waits counted from the wall clock's now
    parts.journal.forgetIds(contents.messages.map((r) => r.id)) // they live under new ids now
  }
  parts.failures.deadLetters.load(contents.deadLetters)
  if (contents.keys.length > 0) {
    parts.ledger.ensure()
    parts.keys?.load(contents.keys)
  }
}

// Rows taken over while running: re-admitted now, or (no room yet, a type not registered) retried.
function adopt<M extends MessageMap>(parts: RecoveryParts<M>, contents: StoreContents): void {
  try {
    take(parts, contents)
  } catch (error) {
    const { journal, events, clock } = parts
    const problem = `could not re-admit ${contents.messages.length} taken-over messages: ${(error as Error).message}`
    events.emit('store-error', new StoreError(journal.store.name, 'recover', problem, error))
    clock.setTimeout(() => adopt(parts, contents), ADOPT_RETRY_MS)
  }
}
