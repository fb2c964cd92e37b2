/**
 * The dead-letter view and its actions: list with filters (type, error class, time), inspect one,
 * replay or purge one, a selection, or all matching a filter.
 *
 * @module
 */

import type { DeadLetter, ErrorClass } from '@flowing/core'
import type { Letters } from '../collect/letters.js'
import { HttpError } from '../http/respond.js'

/**
 * A dead-letter filter as the API takes it: in a query string, or as `filter` in an action's body.
 *
 * @group Views
 */
export interface LetterFilter {
  /** Only this message type. */
  readonly type?: string
  /** Only this error class (`retryable`, `non-retryable`, `unknown`). */
  readonly errorClass?: ErrorClass
  /** Only letters dead-lettered at or after this loop-clock time (ms). */
  readonly since?: number
  /** Only letters dead-lettered at or before this loop-clock time (ms). */
  readonly until?: number
}

const CLASSES: readonly string[] = ['retryable', 'non-retryable', 'unknown']

/** The filter in `source` (a query's params or a body's `filter`), checked. */
export function letterFilter(read: (name: string) => unknown): LetterFilter {
  const type = read('type')
  const errorClass = read('errorClass')
  if (type !== undefined && type !== '' && typeof type !== 'string') throw bad('type', 'a string')
  if (errorClass !== undefined && errorClass !== '' && !CLASSES.includes(errorClass as string)) {
    throw bad('errorClass', `one of ${CLASSES.join(', ')}`)
  }
  return {
    ...(typeof type === 'string' && type !== '' ? { type } : {}),
    ...(typeof errorClass === 'string' && errorClass !== '' ? { errorClass: errorClass as ErrorClass } : {}),
    ...time('since', read('since')),
    ...time('until', read('until')),
  }
}

function time(name: 'since' | 'until', value: unknown): Partial<LetterFilter> {
  if (value === undefined || value === '') return {}
  const n = typeof value === 'string' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isFinite(n)) throw bad(name, 'a clock time in ms')
  return { [name]: n }
}

const bad = (name: string, rule: string) => new HttpError(400, 'bad-request', `\`${name}\` must be ${rule}`)

/** The letters matching `filter`, oldest first. */
export async function matching(letters: Letters, filter: LetterFilter): Promise<DeadLetter[]> {
  return (await letters.list(filter.type)).filter(
    (l) =>
      (filter.errorClass === undefined || l.error.errorClass === filter.errorClass) &&
      (filter.since === undefined || l.at >= filter.since) &&
      (filter.until === undefined || l.at <= filter.until),
  )
}

/**
 * The ids an action names: `ids` (a selection), or `all: true` with a `filter` (all matching).
 * @throws HttpError 400 when the body names neither
 */
export async function selected(letters: Letters, body: Record<string, unknown>): Promise<string[]> {
  const { ids, all } = body
  if (Array.isArray(ids) && ids.length > 0 && ids.length <= 10_000 && ids.every((id) => typeof id === 'string')) {
    return ids as string[]
  }
  if (all === true) {
    const filter = body['filter'] ?? {}
    if (filter === null || typeof filter !== 'object') throw bad('filter', 'an object')
    const found = await matching(
      letters,
      letterFilter((name) => (filter as Record<string, unknown>)[name]),
    )
    return found.map((l) => l.id)
  }
  throw bad('ids', 'a non-empty array of dead-letter ids (or `all: true` with a `filter`)')
}

/** Replays the selected letters: what was replayed (new message ids) and what the loop refused. */
export async function replay(letters: Letters, body: Record<string, unknown>) {
  return letters.replay(await selected(letters, body))
}

/** Purges the selected letters: how many left the store. */
export async function purge(letters: Letters, body: Record<string, unknown>) {
  return { purged: await letters.purge(await selected(letters, body)) }
}
