/**
 * What the transport contract's cases share: a log of handler starts (every process of a case writes
 * to one), the per-key checks, and waiting on a condition.
 */
import { expect } from 'vitest'
import type { ContractMessages, Delivered } from './transport.js'

type Step = ContractMessages['step']

/** One handler start, or one success. */
export interface Seen {
  readonly id: string
  readonly key: string
  readonly n: number
  readonly p: number | undefined
  readonly attempt: number
  /** Which process ran it. */
  readonly by: string
  /** `Date.now()` when it started. */
  readonly at: number
  /** Its place among every start of the case. */
  readonly seq: number
}

/** The starts and successes of one case, across its processes. */
export class Log {
  readonly started: Seen[] = []
  readonly succeeded: Seen[] = []
  #seq = 0

  /** Records a start by process `by`; call {@link Log.done} once it succeeded. */
  start(by: string, m: Delivered<Step>): Seen {
    const seen: Seen = {
      id: m.id,
      ...m.payload,
      p: m.payload.p,
      attempt: m.attempt,
      by,
      at: Date.now(),
      seq: this.#seq++,
    }
    this.started.push(seen)
    return seen
  }

  done(seen: Seen): void {
    this.succeeded.push(seen)
  }

  /** A handler that records its start and its success (after `delayMs`, if given). */
  handler(by: string, delayMs = 0): (m: Delivered<Step>) => Promise<void> {
    return async (m) => {
      const seen = this.start(by, m)
      if (delayMs > 0) await sleep(delayMs)
      this.done(seen)
    }
  }
}

/** The `n` of each key's items, in their order (a log's entries are in the order they happened). */
export function byKey(items: readonly { readonly key: string; readonly n: number }[]): Map<string, number[]> {
  const out = new Map<string, number[]>()
  for (const { key, n } of items) {
    const list = out.get(key) ?? []
    list.push(n)
    out.set(key, list)
  }
  return out
}

// A message is known by its payload's `n` (unique within a case): its id is not stable across
// processes (core gives a restored message a new id; so does the NATS loop to each delivery).

/** Every posted step succeeded exactly once, each key's in post order. */
export function expectExactlyOnceInKeyOrder(log: Log, posted: readonly Step[]): void {
  expect(byKey(log.succeeded)).toEqual(byKey(posted))
  expect(new Set(log.succeeded.map((s) => s.n)).size).toBe(log.succeeded.length)
}

/** Every posted step succeeded at least once, and the first successes of each key are in post order. */
export function expectAtLeastOnceInKeyOrder(log: Log, posted: readonly Step[]): void {
  const first = new Map<number, Seen>()
  for (const s of log.succeeded) if (!first.has(s.n)) first.set(s.n, s)
  expect(byKey([...first.values()])).toEqual(byKey(posted))
}

/**
 * After a crash of the processes `dead`: each message succeeded at most once in them and at most once
 * in the others — a message the dead finished may run again (its acknowledgement died with them:
 * at least once), nothing else twice.
 */
export function expectRerunsOnlyOfFinished(log: Log, dead: readonly string[]): void {
  const count = (by: (s: Seen) => boolean) => {
    const out = new Map<number, number>()
    for (const s of log.succeeded.filter(by)) out.set(s.n, (out.get(s.n) ?? 0) + 1)
    return [...out.values()]
  }
  expect(count((s) => dead.includes(s.by)).every((c) => c === 1)).toBe(true)
  expect(count((s) => !dead.includes(s.by)).every((c) => c === 1)).toBe(true)
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Resolves once `test()` holds; rejects after `timeoutMs` saying what it waited for. */
export async function until(what: string, test: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(5)
  }
}

/** A promise and its resolver. */
export function signal(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve = () => {}
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** A promise that never settles: a handler blocked for good (a process that dies mid-handler). */
export const forever = new Promise<never>(() => {})
