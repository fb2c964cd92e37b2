/**
 * Recovery: at `start()`, what the store kept — dead letters, finished idempotency keys, unfinished
 * messages — comes back into the loop, the messages through `restore()` (a crash recovers the way a
 * planned stop's snapshot does). Rows a shared store takes over later arrive the same way.
 *
 * @module
 */

import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { LoopSnapshot } from '../contracts/snapshot.js'
import type { StoreContents } from '../contracts/store.js'
import { StoreError } from '../errors.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { Journal } from './journal.js'
import { snapshotOf } from './records.js'

const ADOPT_RETRY_MS = 1_000

/** What a recovery touches. */
export interface RecoveryParts<M extends MessageMap> {
  /** Whether the loop is stopping (a stopping loop adopts nothing). */
  readonly lifecycle: { readonly stopping: boolean }
  readonly journal: Pick<Journal<M>, 'recovered' | 'store' | 'forgetIds'>
  /** Re-admits the recovered messages, all or nothing (`restore()`, counted as posts). */
  restore(snapshot: LoopSnapshot): number
  /** Where recovered dead letters go. */
  readonly deadLetters: { load(letters: StoreContents['deadLetters']): void }
  /** Takes the recovered idempotency keys. */
  loadKeys(keys: StoreContents['keys']): void
  readonly clock: Clock
  readonly events: LoopEmitter<M>
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
    // Waits count from the wall clock's now; the messages a crash interrupted (up to one per worker)
    // were accepted with a full queue, so they may take places beyond the capacity until they start.
    parts.restore(readable(parts, contents))
    parts.journal.forgetIds(contents.messages.map((r) => r.id)) // they live under new ids now
  }
  parts.deadLetters.load(contents.deadLetters)
  if (contents.keys.length > 0) parts.loadKeys(contents.keys)
}

// The recovered rows as a snapshot; a row JSON cannot read is a StoreError naming it.
function readable<M extends MessageMap>(parts: RecoveryParts<M>, contents: StoreContents) {
  try {
    return snapshotOf(contents, parts.clock)
  } catch (error) {
    const problem = `a journaled payload is not JSON: ${(error as Error).message}`
    throw new StoreError(parts.journal.store.name, 'recover', problem, error)
  }
}

// Rows taken over while running: re-admitted now, or (no room yet, a type not registered) retried.
// A stopping loop takes none: they stay in the store, for whoever holds its lease next.
function adopt<M extends MessageMap>(parts: RecoveryParts<M>, contents: StoreContents): void {
  if (parts.lifecycle.stopping) return
  try {
    take(parts, contents)
  } catch (error) {
    const { journal, events, clock } = parts
    const problem = `could not re-admit ${contents.messages.length} taken-over messages: ${(error as Error).message}`
    events.emit('store-error', new StoreError(journal.store.name, 'recover', problem, error))
    clock.setTimeout(() => adopt(parts, contents), ADOPT_RETRY_MS)
  }
}
