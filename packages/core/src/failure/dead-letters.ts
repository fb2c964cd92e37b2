/**
 * The dead-letter store: messages that failed for good, with every attempt's error, time and duration,
 * and the operator's tools — list, replay with a fresh attempt budget, purge.
 *
 * @module
 */

import type { DeadLetter, DeadLetterSink } from '../contracts/failures.js'
import type { Message, MessageKey, MessageMap, PostResult } from '../contracts/message.js'
import { InvalidArgumentError } from '../errors.js'
import { type OrderLinks, OrderList } from '../internal/order-list.js'

/**
 * Selects dead letters: every given field must match.
 *
 * @group Failure handling
 * @category Dead letters
 */
export interface DeadLetterFilter {
  /** Only these ids. */
  readonly ids?: readonly string[]
  /** Only this type. */
  readonly type?: string
  /** Only this key. */
  readonly key?: MessageKey
  /** Only this error signature. */
  readonly signature?: string
  /** At most this many, oldest first. */
  readonly limit?: number
}

/**
 * What {@link DeadLetterStore.replay} did.
 *
 * @group Failure handling
 * @category Dead letters
 */
export interface ReplayReport {
  /** The new messages (fresh ids, fresh attempt budgets); their letters left the store. */
  readonly replayed: readonly Message<MessageMap>[]
  /** Letters the loop refused now (full, stopped, unknown type): they stay in the store. */
  readonly refused: readonly { readonly letter: DeadLetter; readonly error: Error }[]
}

/**
 * Re-posts one letter; the loop's `tryPost` with the letter's type, payload, key and priority.
 *
 * @group Failure handling
 * @category Dead letters
 */
export type Replayer = (letter: DeadLetter) => PostResult<MessageMap, never>

// A stored letter and its place in arrival order.
class Stored implements OrderLinks<Stored> {
  older: Stored | null = null
  newer: Stored | null = null

  constructor(public letter: DeadLetter) {}
}

/**
 * The default store: in memory, bounded — past `maxSize` the oldest letter is evicted (counted in
 * {@link DeadLetterStore.evicted}). Reach it as `loop.deadLetters`.
 *
 * @group Failure handling
 * @category Dead letters
 */
export class DeadLetterStore implements DeadLetterSink {
  /** The bound. */
  readonly maxSize: number
  // By id, and in arrival order (a `Map`'s own order makes finding the oldest O(deleted entries) in V8).
  readonly #letters = new Map<string, Stored>()
  readonly #order = new OrderList<Stored>()
  readonly #replay: Replayer
  #evicted = 0
  // Told of every letter that enters or (null) leaves the store: the loop's journal, if it has one.
  #changed: ((id: string, letter: DeadLetter | null) => void) | undefined

  /**
   * @internal Each loop makes its own (`loop.deadLetters`).
   * @param maxSize - letters kept (0 keeps none: use a sink)
   * @param replay - how a letter is re-posted (the loop's)
   */
  constructor(maxSize: number, replay: Replayer) {
    this.maxSize = maxSize
    this.#replay = replay
  }

  /** Letters stored. */
  get size(): number {
    return this.#letters.size
  }

  /** Letters evicted by the bound since the loop started. */
  get evicted(): number {
    return this.#evicted
  }

  /** @internal Reports every letter that enters or (`null`) leaves the store to `changed` (the journal). */
  watch(changed: (id: string, letter: DeadLetter | null) => void): void {
    this.#changed = changed
  }

  /** Stores a letter, evicting the oldest past the bound. */
  add(letter: DeadLetter): void {
    if (this.maxSize === 0) {
      this.#evicted++
      return
    }
    this.#put(letter)
    this.#changed?.(letter.id, letter)
    if (this.#letters.size > this.maxSize) {
      this.#remove(this.#oldest())
      this.#evicted++
    }
  }

  /** @internal Puts back letters a journal recovered (oldest first), without reporting them as new. */
  load(letters: readonly DeadLetter[]): void {
    for (const letter of letters) {
      this.#put(letter)
      if (this.#letters.size > this.maxSize) this.#remove(this.#oldest())
    }
  }

  /** One letter by message id. */
  get(id: string): DeadLetter | undefined {
    return this.#letters.get(id)?.letter
  }

  /**
   * The letters matching `filter` (all without one), oldest first.
   * @throws InvalidArgumentError for a bad filter
   */
  list(filter?: DeadLetterFilter): DeadLetter[] {
    return this.#select(filter)
  }

  /**
   * Re-posts the matching letters as new messages with a fresh attempt budget (the operator's tool,
   * once the cause is fixed). A letter the loop refuses now stays in the store; the others leave it.
   * @throws InvalidArgumentError for a bad filter (nothing replayed)
   */
  replay(filter?: DeadLetterFilter): ReplayReport {
    const replayed: Message<MessageMap>[] = []
    const refused: { letter: DeadLetter; error: Error }[] = []
    for (const letter of this.#select(filter)) {
      let result: PostResult<MessageMap, never>
      try {
        result = this.#replay(letter)
      } catch (error) {
        refused.push({ letter, error: error as Error })
        continue
      }
      if (result.ok || result.status === 'dropped') {
        this.#remove(letter.id)
        replayed.push(result.message)
      } else refused.push({ letter, error: result.error })
    }
    return { replayed, refused }
  }

  /**
   * Deletes the matching letters (all without a filter).
   * @returns how many were deleted
   * @throws InvalidArgumentError for a bad filter (nothing deleted)
   */
  purge(filter?: DeadLetterFilter): number {
    const doomed = this.#select(filter)
    for (const letter of doomed) this.#remove(letter.id)
    return doomed.length
  }

  // A new letter goes last; one whose id is stored already takes its place.
  #put(letter: DeadLetter): void {
    const stored = this.#letters.get(letter.id)
    if (stored !== undefined) stored.letter = letter
    else {
      const fresh = new Stored(letter)
      this.#letters.set(letter.id, fresh)
      this.#order.append(fresh)
    }
  }

  #oldest(): string {
    return (this.#order.oldest as Stored).letter.id
  }

  #remove(id: string): void {
    const stored = this.#letters.get(id)
    if (stored !== undefined) {
      this.#letters.delete(id)
      this.#order.remove(stored)
    }
    this.#changed?.(id, null)
  }

  #select(filter: DeadLetterFilter | undefined): DeadLetter[] {
    const f = checkFilter(filter)
    const ids = f.ids === undefined ? undefined : new Set(f.ids)
    const out: DeadLetter[] = []
    for (const { letter } of this.#order) {
      if (out.length >= (f.limit ?? Number.POSITIVE_INFINITY)) break
      if (ids !== undefined && !ids.has(letter.id)) continue
      if (f.type !== undefined && letter.type !== f.type) continue
      if (f.key !== undefined && letter.key !== f.key) continue
      if (f.signature !== undefined && letter.error.signature !== f.signature) continue
      out.push(letter)
    }
    return out
  }
}

function checkFilter(filter: DeadLetterFilter | undefined): DeadLetterFilter {
  if (filter === undefined) return {}
  if (typeof filter !== 'object' || filter === null) throw new InvalidArgumentError('filter', 'an object', filter)
  const { ids, limit } = filter
  if (ids !== undefined && !(Array.isArray(ids) && ids.every((id) => typeof id === 'string'))) {
    throw new InvalidArgumentError('filter.ids', 'an array of message ids', ids)
  }
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
    throw new InvalidArgumentError('filter.limit', 'a non-negative integer', limit)
  }
  return filter
}
