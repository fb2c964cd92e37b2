/**
 * Rate limits: what a user writes (`{ max, perMs, per }`), its validation, and the sliding window
 * that enforces one budget.
 *
 * @module
 */
import type { RateLimitScope, RateRule } from '../contracts/flow.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

const KEYS = ['max', 'perMs', 'per'] as const
let rules = 0

/**
 * Validates a `rateLimit` option: one limit or an array of them (each must hold).
 * @param scopes - the scopes allowed where it is given; the first is the default
 * @throws InvalidArgumentError naming the field and the rule
 */
export function checkRateLimits(name: string, value: unknown, scopes: readonly RateLimitScope[]): RateRule[] {
  if (!Array.isArray(value)) return [checkRateLimit(name, value, scopes)]
  if (value.length > 16) throw new InvalidArgumentError(name, 'at most 16 rate limits', value)
  return value.map((limit, i) => checkRateLimit(`${name}[${i}]`, limit, scopes))
}

function checkRateLimit(name: string, value: unknown, scopes: readonly RateLimitScope[]): RateRule {
  const o = check.snapshotOptions(name, value)
  check.checkKnownKeys(name, o, KEYS)
  const max = check.positiveInteger(`${name}.max`, o['max'], 1_000_000)
  const perMs = o['perMs']
  if (typeof perMs !== 'number' || !(perMs > 0) || !Number.isFinite(perMs)) {
    throw new InvalidArgumentError(`${name}.perMs`, 'a positive finite number of ms', perMs)
  }
  const per = o['per'] === undefined ? (scopes[0] as RateLimitScope) : check.oneOf(`${name}.per`, o['per'], scopes)
  return { id: ++rules, max, perMs, per }
}

/**
 * One budget: the handler entries of its last `max` starts (a ring that grows up to `max`), the
 * starts booked but not entered yet, and a pause (a downstream's retry-after). A start is allowed at
 * `now` when fewer than `max` entered in `(now − perMs, now]` or are still booked, and no pause runs.
 *
 * @remarks Why a booked start counts until it is entered, and counts from its entry on: a window
 * measured at the handlers' entries must hold, whatever runs between the take and the call (a
 * `started` listener, an async ledger claim, middleware, a GC pause). Let entries `e` be readings
 * taken once the handler was entered (its first statement ran), each `e ≥` the reading `t` at which
 * its start was allowed. Suppose `max + 1` entries fall within less than `perMs`: `e_0 ≤ … ≤ e_max`,
 * `e_max − e_0 < perMs`. Take the last of them to be allowed, L, at `t_L ≤ e_L ≤ e_max`. Each of the
 * other `max` was allowed before it, so at `t_L` it was booked (counted) or entered at
 * `e_j ≥ e_0 > e_max − perMs ≥ t_L − perMs` (counted): `max` counted, so L was refused — a
 * contradiction. No window of `perMs`, wherever it starts, holds more than `max` entries.
 */
export class SlidingWindow {
  #max: number
  readonly #perMs: number
  #starts: number[] = []
  // The oldest start's index once the ring is full.
  #head = 0
  // Starts allowed and booked whose handlers have not been entered yet: each fills a slot that has not
  // begun to age.
  #booked = 0
  /** No start before this time (a retry-after). */
  pausedUntil = Number.NEGATIVE_INFINITY

  constructor(max: number, perMs: number) {
    this.#max = max
    this.#perMs = perMs
  }

  /** The window (ms). */
  get perMs(): number {
    return this.#perMs
  }

  /** Starts booked whose handlers have not been entered yet. */
  get booked(): number {
    return this.#booked
  }

  /** Starts allowed per window now (after a share or a throttle's resize). */
  get max(): number {
    return this.#max
  }

  /** Starts that count at `now`: booked, or entered within the last `perMs` (a scan: for an inspection). */
  used(now: number): number {
    let n = this.#booked
    for (const at of this.#starts) if (at + this.#perMs > now) n++
    return n
  }

  /**
   * The earliest time from `now` on at which a start is allowed; `Infinity` while booked starts alone
   * fill the budget (the first of them to be entered tells when).
   */
  nextAt(now: number): number {
    const n = this.#starts.length
    // Of the recorded entries, this many must have aged out before one more start fits.
    const over = n + this.#booked - this.#max
    const free =
      over < 0
        ? now
        : over >= n
          ? Number.POSITIVE_INFINITY
          : Math.max(now, (this.#starts[(this.#head + over) % n] as number) + this.#perMs)
    return Math.max(free, this.pausedUntil)
  }

  /** Starts allowed at `now` (0 while paused or full). */
  free(now: number): number {
    if (this.pausedUntil > now) return 0
    let n = this.#max - this.#starts.length - this.#booked
    const s = this.#starts
    for (let i = 0; i < s.length && (s[(this.#head + i) % s.length] as number) + this.#perMs <= now; i++) n++
    return Math.max(0, n)
  }

  /**
   * When the next start is allowed once every start free at `now` is taken (as many as
   * {@link SlidingWindow.free} said): the oldest entry still counting, a window later.
   */
  nextWhenFull(now: number): number {
    const s = this.#starts
    for (let i = 0; i < s.length; i++) {
      const at = (s[(this.#head + i) % s.length] as number) + this.#perMs
      if (at > now) return Math.max(at, this.pausedUntil)
    }
    return Math.max(now + this.#perMs, this.pausedUntil)
  }

  /** Books a start (call only when {@link SlidingWindow.nextAt} is `now`): it counts until it is entered. */
  book(): void {
    this.#booked++
  }

  /** A booked start's handler was entered at `now` (or will never be): it counts from `now` on. */
  enter(now: number): void {
    this.#booked--
    this.record(now)
  }

  /** Records a start entered at `now` (call only when {@link SlidingWindow.nextAt} is `now`). */
  record(now: number): void {
    if (this.#starts.length < this.#max) this.#starts.push(now)
    else {
      this.#starts[this.#head] = now
      this.#head = (this.#head + 1) % this.#max
    }
  }

  /** Changes `max`, keeping the newest starts (at most the new `max` of them). */
  resize(max: number): void {
    const s = this.#starts
    const ordered = s.length < this.#max ? s : [...s.slice(this.#head), ...s.slice(0, this.#head)]
    this.#starts = ordered.slice(Math.max(0, ordered.length - max))
    this.#head = 0
    this.#max = max
  }

  /** Nothing booked or recorded still counts at `now`, and no pause runs: the window can be forgotten. */
  idle(now: number): boolean {
    if (this.pausedUntil > now || this.#booked > 0) return false
    const s = this.#starts
    if (s.length === 0) return true
    const newest = s.length < this.#max ? s[s.length - 1] : s[(this.#head + this.#max - 1) % this.#max]
    return (newest as number) + this.#perMs <= now
  }
}
