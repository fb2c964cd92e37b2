/**
 * The configured budgets of one loop (`rateLimit` per type, route, key or group): one per rule and
 * per what the rule is per, made at first use; idle ones are forgotten by a sweep.
 *
 * @module
 */

import type { RateRule } from '../contracts/flow.js'
import { Limiter, type Order } from './limiter.js'

// A rule's budgets by what they are per (a type, a route, a key, a group).
type Table = Map<unknown, Limiter>

/** The budgets of the loop's rules. */
export class Budgets {
  readonly #compare: Order
  // Each rule's budgets, by rule id.
  readonly #tables = new Map<number, Table>()
  #size = 0
  // Processes sharing the budgets (see `Limiter.share`).
  #processes = 1

  constructor(compare: Order) {
    this.#compare = compare
  }

  /** Budgets that exist now. */
  get size(): number {
    return this.#size
  }

  /** The budget of `rule` for what it is per (`of`: a type, a route, a key, a group). */
  of(rule: RateRule, of: unknown): Limiter {
    let table = this.#tables.get(rule.id)
    if (table === undefined) {
      table = new Map()
      this.#tables.set(rule.id, table)
    }
    let l = table.get(of)
    if (l === undefined) {
      const name = `${rule.per}:${typeof of === 'number' ? `#${of}` : String(of)}`
      l = new Limiter(name, rule.per, rule, this.#compare)
      if (this.#processes !== 1) l.share(this.#processes)
      table.set(of, l)
      this.#size++
    }
    return l
  }

  /** Divides every budget, those made from now on too, among `processes` (see `Limiter.share`). */
  share(processes: number): void {
    this.#processes = processes
    for (const table of this.#tables.values()) for (const l of table.values()) l.share(processes)
  }

  /** Forgets budgets with nothing waiting, no wake-up and nothing booked or recorded that still counts. */
  sweep(now: number): void {
    for (const table of this.#tables.values()) {
      for (const [of, l] of table) {
        if (!l.idle(now)) continue
        table.delete(of)
        this.#size--
      }
    }
  }

  /** Every budget (a stop clears their lanes and wake-ups; `loop.inspect()` reads them). */
  all(): Limiter[] {
    const out: Limiter[] = []
    for (const table of this.#tables.values()) for (const l of table.values()) out.push(l)
    return out
  }
}
