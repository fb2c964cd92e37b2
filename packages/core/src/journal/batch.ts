/**
 * One journal batch: the changes it carries (and the envelopes behind them, so a failed commit can
 * give them back), and how it becomes the store's {@link JournalBatch}.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type { JournalBatch, JournalRecord, KeyRecord } from '../contracts/store.js'
import type { Envelope } from '../internal/envelope.js'

/** A `flushed()` caller: settled when batch `batch` commits, or fails. */
export interface Waiter {
  readonly batch: number
  readonly resolve: () => void
  readonly reject: (error: Error) => void
}

/** One batch in the making, or in flight. */
export interface Pending {
  readonly puts: Envelope[]
  readonly records: JournalRecord[]
  readonly gone: Envelope[]
  readonly removed: string[]
  readonly letters: Map<string, DeadLetter | null>
  readonly keys: Map<string, KeyRecord | null>
}

/** The store's view of a batch. */
export function toBatch(p: Pending): JournalBatch {
  const letters: DeadLetter[] = []
  const lettersRemoved: string[] = []
  for (const [id, l] of p.letters) l === null ? lettersRemoved.push(id) : letters.push(l)
  const keys: KeyRecord[] = []
  const keysRemoved: string[] = []
  for (const [key, k] of p.keys) k === null ? keysRemoved.push(key) : keys.push(k)
  return {
    messages: p.records,
    removed: p.removed,
    deadLetters: letters,
    deadLettersRemoved: lettersRemoved,
    keys,
    keysRemoved,
  }
}

/** Clears a clock timer, if one is set. */
export function clearTimer(clock: Clock, timer: unknown): void {
  if (timer !== undefined) clock.clearTimeout(timer as never)
}

/** An error's message, or the thrown value as text. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
