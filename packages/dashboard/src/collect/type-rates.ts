/**
 * Rates per message type and route, at a cost the loop can afford with a page open.
 *
 * Per-message listeners (`posted`, `started`, `finished`) cost a loop ~20 % of its throughput when
 * attached for good. So they are attached in **samples**: for the whole second while the loop runs
 * fewer than {@link EXACT_BELOW} messages a second (exact counts, at a cost nobody sees), and for the
 * first {@link SAMPLE_MS} ms of each second above it (2 % of the time). Sampled shares are scaled to
 * the loop's own exact counters (`posted`, `succeeded`), so the per-type rates add up to the loop's
 * totals. Failures (`failed`, `retrying`, `dead-lettered`, `cancelled`) are always counted exactly.
 * The {@link MAX_TYPES} busiest (type, route) pairs of each second are shown.
 *
 * @module
 */

import type { Message } from '@flowing/core'
import type { ShownLoop } from './loop-source.js'

type Shown = Message<Record<string, unknown>, string>

/** Below this many messages a second the per-message counts are exact. */
export const EXACT_BELOW = 2_000
/** The sampling window each second above it, ms. */
export const SAMPLE_MS = 20
/** Types (and routes) shown, the busiest first. */
export const MAX_TYPES = 50

/**
 * Messages a second of one type (and route, for a routed type), over the last second.
 *
 * @group Views
 */
export interface TypeRate {
  /** The message type. */
  readonly type: string
  /** The route key, for a routed type. */
  readonly route: string | undefined
  readonly posted: number
  readonly started: number
  readonly succeeded: number
  readonly failed: number
  readonly retried: number
  readonly deadLettered: number
  readonly cancelled: number
  /** Whether `posted`, `started` and `succeeded` were sampled (`false`: counted exactly). */
  readonly sampled: boolean
}

const POSTED = 0
const STARTED = 1
const SUCCEEDED = 2
const FAILED = 3
const RETRIED = 4
const DEAD = 5
const CANCELLED = 6
type Counts = [number, number, number, number, number, number, number]

/** The exact loop-wide deltas of the last second, to scale the samples to. */
export interface Totals {
  readonly posted: number
  readonly succeeded: number
}

/** Counts per (type, route) for one loop while a page watches it. */
export class TypeRates {
  readonly #loop: ShownLoop
  #counts = new Map<string, Counts>()
  #names = new Map<string, [string, string | undefined]>()
  #sampling = false
  #sampledMs = 0
  #sampleStart = 0
  #exact = true
  #stopSample: ReturnType<typeof setTimeout> | undefined

  readonly #count = (m: Shown, at: number): void => {
    const name = m.routeKey === undefined ? m.type : `${m.type}\u0000${m.routeKey}`
    let counts = this.#counts.get(name)
    if (counts === undefined) {
      counts = [0, 0, 0, 0, 0, 0, 0]
      this.#counts.set(name, counts)
      this.#names.set(name, [m.type, m.routeKey])
    }
    counts[at] = (counts[at] as number) + 1
  }
  readonly #onPosted = (m: Shown) => this.#count(m, POSTED)
  readonly #onStarted = (m: Shown) => this.#count(m, STARTED)
  readonly #onFinished = (m: Shown, s: { outcome: string }) => {
    if (s.outcome === 'succeeded') this.#count(m, SUCCEEDED)
  }
  readonly #onFailed = (m: Shown) => this.#count(m, FAILED)
  readonly #onRetrying = (m: Shown) => this.#count(m, RETRIED)
  readonly #onDead = (m: Shown) => this.#count(m, DEAD)
  readonly #onCancelled = (m: Shown) => this.#count(m, CANCELLED)

  /** @param loop - the loop to count */
  constructor(loop: ShownLoop) {
    this.#loop = loop
  }

  /**
   * Starts counting: failures at once, per-message events in samples — for the whole first second
   * when `quiet` (the loop's rate so far is below {@link EXACT_BELOW}), else for its first
   * {@link SAMPLE_MS} ms: a busy loop does not pay for a whole second each time a page opens.
   */
  attach(now: number, quiet: boolean): void {
    const events = this.#loop.events
    events.on('failed', this.#onFailed)
    events.on('retrying', this.#onRetrying)
    events.on('dead-lettered', this.#onDead)
    events.on('cancelled', this.#onCancelled)
    this.#exact = quiet
    this.#startSample(now)
    if (!quiet) this.#stopSample = setTimeout(() => this.#endSample(Date.now()), SAMPLE_MS).unref()
  }

  /** Stops counting: the loop pays nothing from here on. */
  detach(now: number): void {
    const events = this.#loop.events
    events.off('failed', this.#onFailed)
    events.off('retrying', this.#onRetrying)
    events.off('dead-lettered', this.#onDead)
    events.off('cancelled', this.#onCancelled)
    this.#endSample(now)
    this.#counts.clear()
    this.#names.clear()
  }

  /**
   * The rates since the last call, `elapsedMs` ago, scaled to the loop's exact `totals`; then decides
   * how the next second is counted.
   */
  rates(now: number, elapsedMs: number, totals: Totals): TypeRate[] {
    if (this.#sampling) this.#sampledMs += now - this.#sampleStart
    const sampledMs = Math.max(1, Math.min(elapsedMs, this.#sampledMs))
    const exact = this.#exact
    const out = this.#scaled(elapsedMs, sampledMs, totals, exact).slice(0, MAX_TYPES)
    this.#counts = new Map()
    this.#names = new Map()
    this.#exact = (totals.posted * 1000) / Math.max(1, elapsedMs) < EXACT_BELOW
    this.#sampledMs = 0
    if (this.#sampling) this.#sampleStart = now
    else this.#startSample(now)
    if (!this.#exact) this.#stopSample ??= setTimeout(() => this.#endSample(Date.now()), SAMPLE_MS).unref()
    return out
  }

  #scaled(elapsedMs: number, sampledMs: number, totals: Totals, exact: boolean): TypeRate[] {
    const perSecond = 1000 / Math.max(1, elapsedMs)
    let posted = 0
    let succeeded = 0
    for (const c of this.#counts.values()) {
      posted += c[POSTED]
      succeeded += c[SUCCEEDED]
    }
    const byTotal = (n: number, sum: number, total: number) => (exact || sum === 0 ? n : (n / sum) * total)
    const out: TypeRate[] = []
    for (const [name, c] of this.#counts) {
      const [type, route] = this.#names.get(name) as [string, string | undefined]
      out.push({
        type,
        route,
        posted: round(byTotal(c[POSTED], posted, totals.posted) * perSecond),
        started: round((exact ? c[STARTED] : (c[STARTED] * elapsedMs) / sampledMs) * perSecond),
        succeeded: round(byTotal(c[SUCCEEDED], succeeded, totals.succeeded) * perSecond),
        failed: round(c[FAILED] * perSecond),
        retried: round(c[RETRIED] * perSecond),
        deadLettered: round(c[DEAD] * perSecond),
        cancelled: round(c[CANCELLED] * perSecond),
        sampled: !exact,
      })
    }
    return out.sort((a, b) => b.posted + b.started - (a.posted + a.started) || a.type.localeCompare(b.type))
  }

  #startSample(now: number): void {
    if (this.#sampling) return
    const events = this.#loop.events
    events.on('posted', this.#onPosted)
    events.on('started', this.#onStarted)
    events.on('finished', this.#onFinished)
    this.#sampling = true
    this.#sampleStart = now
  }

  #endSample(now: number): void {
    if (this.#stopSample !== undefined) clearTimeout(this.#stopSample)
    this.#stopSample = undefined
    if (!this.#sampling) return
    const events = this.#loop.events
    events.off('posted', this.#onPosted)
    events.off('started', this.#onStarted)
    events.off('finished', this.#onFinished)
    this.#sampling = false
    this.#sampledMs += now - this.#sampleStart
  }
}

const round = (n: number): number => Math.round(n * 10) / 10
