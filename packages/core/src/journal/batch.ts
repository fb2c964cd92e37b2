/**
 * One journal batch: the changes made since the last one (the dirty set), what a batch carries (and
 * the envelopes behind them, so a failed commit can give them back), and how it becomes the store's
 * {@link JournalBatch}.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type { JournalBatch, JournalRecord, KeyRecord, Store } from '../contracts/store.js'
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

/**
 * The changes made since the last batch was built. A message is marked, not recorded: the batch reads
 * its record as it stands when the batch is built, so a message that changes many times between two
 * batches is written once (and one that finished before its first batch, not at all).
 */
export class Changes {
  // Messages whose latest transition is not in the store yet.
  dirty = new Set<Envelope>()
  #removed: string[] = []
  #letters = new Map<string, DeadLetter | null>()
  #keys = new Map<string, KeyRecord | null>()

  /** Whether anything waits for the next batch. */
  get any(): boolean {
    return this.dirty.size > 0 || this.#removed.length > 0 || this.#letters.size > 0 || this.#keys.size > 0
  }

  /** Message rows the next batch changes at least (what decides that a gathering batch is big enough). */
  get rows(): number {
    return this.dirty.size + this.#removed.length
  }

  /** Rows of `ids` go (messages recovered under a new id). */
  remove(ids: readonly string[]): void {
    for (const id of ids) this.#removed.push(id)
  }

  /** A dead letter entered the store, or (`null`) left it: the latest change of an id wins. */
  letter(id: string, letter: DeadLetter | null): void {
    this.#letters.set(id, letter)
  }

  /** A finished key, or (`null`) one released: the latest change of a key wins. */
  key(key: string, record: KeyRecord | null): void {
    this.#keys.set(key, record)
  }

  /** Takes every change out: the marked messages, and a batch holding the rest; none is left. */
  take(): { marked: Set<Envelope>; pending: Pending } {
    const pending: Pending = {
      puts: [],
      records: [],
      gone: [],
      removed: this.#removed,
      letters: this.#letters,
      keys: this.#keys,
    }
    const marked = this.dirty
    this.dirty = new Set()
    this.#removed = []
    this.#letters = new Map()
    this.#keys = new Map()
    return { marked, pending }
  }

  /**
   * A failed batch's changes come back to be written again: its messages in front of those marked
   * since (new rows go to the store in first-journaled, post, order), and a later change of the same
   * letter or key wins over the batch's.
   */
  giveBack(p: Pending): void {
    this.dirty = new Set([...p.puts, ...p.gone, ...this.dirty])
    const gone = new Set(p.gone.map((m) => m.id)) // rebuilt from their envelopes
    for (const id of p.removed) if (!gone.has(id)) this.#removed.push(id)
    for (const [id, letter] of p.letters) if (!this.#letters.has(id)) this.#letters.set(id, letter)
    for (const [key, record] of p.keys) if (!this.#keys.has(key)) this.#keys.set(key, record)
  }
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

/** How a commit answered. */
export interface CommitAnswer {
  readonly ok: () => void
  readonly failed: (error: unknown) => void
}

/**
 * Calls `store.commit(batch)` and passes its answer on once: a thenable that answers twice, or both
 * ways, counts once; a commit, or its thenable's `then`, that throws has failed.
 * @returns for an answer still awaited (a promise), whether it has come; `undefined` when it came already
 * @throws what `answer` throws (a bug in the loop, never the store's failure: it must not be taken for one)
 */
export function callCommit(store: Store, batch: JournalBatch, answer: CommitAnswer): (() => boolean) | undefined {
  let settled = false
  const ok = () => {
    if (settled) return
    settled = true
    answer.ok()
  }
  const failed = (error: unknown) => {
    if (settled) return
    settled = true
    answer.failed(error)
  }
  try {
    const result = store.commit(batch) as unknown
    const then = (result as { then?: unknown } | null | undefined)?.then
    if (typeof then !== 'function') {
      ok()
      return undefined
    }
    then.call(result, ok, failed)
  } catch (error) {
    if (settled) throw error
    failed(error)
    return undefined
  }
  return () => settled
}

/** Clears a clock timer, if one is set. */
export function clearTimer(clock: Clock, timer: unknown): void {
  if (timer !== undefined) clock.clearTimeout(timer as never)
}

/** An error's message, or the thrown value as text. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
