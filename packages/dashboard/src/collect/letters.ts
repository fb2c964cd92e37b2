/**
 * Where a shown loop's dead letters are: the loop's in-memory store, or — for a `@flowing/nats` loop —
 * the dead-letter stream its processes share (read, replayed and purged through the NATS loop, so that a
 * replay goes back into its partition, not into this process's local loop).
 *
 * @module
 */
import type { DeadLetter, DeadLetterFilter, DeadLetterStore } from '@flowing/core'

/** What a replay did: the new messages, and the letters that stayed (with why). */
export interface LettersReplayed {
  readonly replayed: readonly { readonly id: string; readonly type: string }[]
  readonly refused: readonly { readonly id: string; readonly error: string }[]
}

/** A loop's dead letters, one way for both kinds of loop. */
export interface Letters {
  /** The letters (of `type`, when given), oldest first. */
  list(type?: string): Promise<DeadLetter[]>
  /** One letter. */
  get(id: string): Promise<DeadLetter | undefined>
  /** Replays the letters `ids` names. */
  replay(ids: readonly string[]): Promise<LettersReplayed>
  /** Purges the letters `ids` names; how many went. */
  purge(ids: readonly string[]): Promise<number>
}

/**
 * The part of a `@flowing/nats` loop's shared dead letters (`natsLoop.deadLetters`) the dashboard uses.
 *
 * @group Dashboard
 */
export interface SharedLetters {
  /** The letters that match `filter`, oldest first. */
  list(filter?: DeadLetterFilter): Promise<DeadLetter[]>
  /** Publishes the matching letters back into their partitions and removes them. */
  replay(filter?: DeadLetterFilter): Promise<{
    readonly replayed: ReadonlyMap<string, string>
    readonly refused: readonly { letter: DeadLetter; error: Error }[]
  }>
  /** Removes the matching letters; how many. */
  purge(filter?: DeadLetterFilter): Promise<number>
}

const typeFilter = (type: string | undefined) => (type === undefined ? undefined : { type })

/** A loop's in-memory store (`loop.deadLetters`). */
export function localLetters(store: DeadLetterStore): Letters {
  return {
    list: async (type) => store.list(typeFilter(type)),
    get: async (id) => store.get(id),
    replay: async (ids) => {
      const report = store.replay({ ids })
      return {
        replayed: report.replayed.map((m) => ({ id: m.id, type: m.type })),
        refused: report.refused.map(({ letter, error }) => ({ id: letter.id, error: error.message })),
      }
    },
    purge: async (ids) => store.purge({ ids }),
  }
}

/** The dead-letter stream behind `shared`. */
export function sharedLetters(shared: SharedLetters): Letters {
  return {
    list: (type) => shared.list(typeFilter(type)),
    get: async (id) => (await shared.list({ ids: [id] }))[0],
    replay: async (ids) => {
      const letters = await shared.list({ ids })
      const report = await shared.replay({ ids })
      const typeOf = new Map(letters.map((l) => [l.id, l.type]))
      return {
        replayed: [...report.replayed].map(([letter, id]) => ({ id, type: typeOf.get(letter) ?? '' })),
        refused: report.refused.map(({ letter, error }) => ({ id: letter.id, error: error.message })),
      }
    },
    purge: (ids) => shared.purge({ ids }),
  }
}
