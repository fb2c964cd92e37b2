/**
 * The pauses a downstream's "too many requests" (`RateLimitError`) puts on a route — or, by the
 * error's `scope`, on one key's or one key group's messages of that route — each followed by a
 * throttle (see `./throttle.ts`) that goes once nothing waited for it for 10 s.
 *
 * ```
 *  429 ─▶ scope? ─ route ─▶ the route's pause (today's default)
 *                ├ key ───▶ the pause of (route, the message's key)    keyless: the route's
 *                └ group ─▶ the pause of (route, the message's group)  groupless: the route's
 *  a start ─▶ the pauses of its route, its key and its group on that route, those that exist
 * ```
 *
 * @module
 */

import type { RateLimitHold } from '../contracts/flow.js'
import type { MessageKey } from '../contracts/message.js'
import type { RetryAfterScope } from '../errors.js'
import { Limiter, type Order } from './limiter.js'

// Per scope: per route, the pauses by what they are for (the route itself, a key, a group).
type Table = Map<string, Map<unknown, Limiter>>

/** The retry-after pauses and throttles of one loop. */
export class Pauses {
  readonly #compare: Order
  readonly #tables: Readonly<Record<RetryAfterScope, Table>> = { route: new Map(), key: new Map(), group: new Map() }
  #size = 0

  constructor(compare: Order) {
    this.#compare = compare
  }

  /** Pauses (and throttles) that exist now. */
  get size(): number {
    return this.#size
  }

  /**
   * A 429 of `scope` at `now` for a message of `route` with `key` and `group`: the pause it falls
   * under, made at its first 429 (a later one cuts its throttle). A key (group) scope without a key
   * (group) is the route's.
   */
  refused(
    route: string,
    scope: RetryAfterScope,
    key: MessageKey | undefined,
    group: string | undefined,
    now: number,
  ): Limiter {
    const of = scope === 'key' ? key : scope === 'group' ? group : route
    if (of === undefined) return this.refused(route, 'route', key, group, now)
    let byOf = this.#tables[scope].get(route)
    if (byOf === undefined) {
      byOf = new Map()
      this.#tables[scope].set(route, byOf)
    }
    let l = byOf.get(of)
    if (l === undefined) {
      l = new Limiter(nameOf(route, scope, of), 'retry-after', undefined, this.#compare, now, scope)
      byOf.set(of, l)
      this.#size++
    } else l.throttle?.refused(now)
    return l
  }

  /** A 429 of `scope` asking for `ms` (see {@link Pauses.refused}): its pause lasts until `now + ms` at least. */
  pause(
    route: string,
    scope: RetryAfterScope,
    key: MessageKey | undefined,
    group: string | undefined,
    ms: number,
    now: number,
  ): Limiter {
    const l = this.refused(route, scope, key, group, now)
    l.window.pausedUntil = Math.max(l.window.pausedUntil, now + ms)
    return l
  }

  /** Pushes onto `out` the pauses a message of `route` with `key` and `group` is under now. */
  collect(route: string, key: MessageKey | undefined, group: string | undefined, now: number, out: Limiter[]): void {
    this.#collect('route', route, route, now, out)
    if (key !== undefined) this.#collect('key', route, key, now, out)
    if (group !== undefined) this.#collect('group', route, group, now, out)
  }

  /** Forgets every throttle that nothing waited for for a while. */
  sweep(now: number): void {
    for (const table of Object.values(this.#tables)) {
      for (const [route, byOf] of table) for (const [of, l] of byOf) this.#retire(table, route, byOf, of, l, now)
    }
  }

  /** Every pause (a stop clears their lanes and wake-ups; `loop.inspect()` reads them). */
  all(): Limiter[] {
    const out: Limiter[] = []
    for (const table of Object.values(this.#tables)) {
      for (const byOf of table.values()) for (const l of byOf.values()) out.push(l)
    }
    return out
  }

  #collect(scope: RetryAfterScope, route: string, of: unknown, now: number, out: Limiter[]): void {
    const table = this.#tables[scope]
    const byOf = table.get(route)
    const l = byOf?.get(of)
    if (l !== undefined && !this.#retire(table, route, byOf as Map<unknown, Limiter>, of, l, now)) out.push(l)
  }

  // A throttle that nothing waited for for a while goes (true): its messages flow freely again.
  #retire(table: Table, route: string, byOf: Map<unknown, Limiter>, of: unknown, l: Limiter, now: number): boolean {
    if (!l.throttle?.step(now, l.waiting) || l.waiting > 0 || l.timer !== -1 || l.window.booked > 0) return false
    byOf.delete(of)
    if (byOf.size === 0) table.delete(route)
    this.#size--
    return true
  }
}

/**
 * The `rate-limited` hold of a message waiting for pause `l` until `until`, its throttle allowing
 * `perSecond`; `retryAfterMs` on the message whose handler's 429 asked for it.
 */
export function pauseHold(l: Limiter, until: number, perSecond: number, retryAfterMs?: number): RateLimitHold {
  const hold = { limit: l.name, scope: l.scope, until, perSecond, retryAfterScope: l.retryAfterScope ?? 'route' }
  return retryAfterMs === undefined ? hold : { ...hold, retryAfterMs }
}

function nameOf(route: string, scope: RetryAfterScope, of: unknown): string {
  if (scope === 'route') return `retry-after:${route}`
  return `retry-after:${route}/${scope}:${typeof of === 'number' ? `#${of}` : String(of)}`
}
