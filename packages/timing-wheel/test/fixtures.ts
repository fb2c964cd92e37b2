/**
 * Test doubles: a reference model of the wheel (a plain array, obviously correct, O(n)) and a fake
 * timer provider whose timers can be made to fire early, as Node's do.
 */
import type { TimerProvider } from '../src/index.js'

/** One pending timer of the reference model. */
interface RefTimer {
  readonly key: number
  readonly deadline: number
  readonly seq: number
}

/** The specification of the wheel as a sorted-on-demand array: what `TimingWheel` must match. */
export class ReferenceWheel {
  #pending: RefTimer[] = []
  #seq = 0

  get size(): number {
    return this.#pending.length
  }

  add(key: number, deadline: number): void {
    this.#pending.push({ key, deadline, seq: this.#seq++ })
  }

  cancel(key: number): boolean {
    const at = this.#pending.findIndex((t) => t.key === key)
    if (at < 0) return false
    this.#pending.splice(at, 1)
    return true
  }

  has(key: number): boolean {
    return this.#pending.some((t) => t.key === key)
  }

  /** Due timers (deadline ≤ now), by deadline then schedule order, at most `limit`. */
  advance(now: number, limit = Number.POSITIVE_INFINITY): number[] {
    const due = this.#pending
      .filter((t) => t.deadline <= now)
      .sort((a, b) => a.deadline - b.deadline || a.seq - b.seq)
      .slice(0, limit)
    const fired = new Set(due.map((t) => t.key))
    this.#pending = this.#pending.filter((t) => !fired.has(t.key))
    return due.map((t) => t.key)
  }

  nextDeadline(): number | undefined {
    return this.#pending.length === 0 ? undefined : Math.min(...this.#pending.map((t) => t.deadline))
  }

  /** Everything pending, in order; empties the model. */
  clear(): number[] {
    return this.advance(Number.POSITIVE_INFINITY)
  }
}

/** A handle of {@link FakeTimers}. */
export interface FakeHandle {
  readonly id: number
  /** When the fake will fire it (possibly before the requested time: see `earlyMs`). */
  readonly fireAt: number
  readonly requestedMs: number
  readonly fn: () => void
  unrefCalled: boolean
  unref(): void
}

/**
 * A virtual clock with one-shot timers and immediates. `earlyMs` makes every timer fire that much
 * before its requested time (never before it was set), like Node's ~1 ms-early timers.
 */
export class FakeTimers implements TimerProvider {
  time: number
  earlyMs = 0
  readonly timeouts = new Map<number, FakeHandle>()
  readonly immediates: (() => void)[] = []
  /** Every `setTimeout` call's `ms`, in order. */
  readonly requested: number[] = []
  cleared = 0
  #ids = 0

  constructor(start = 0) {
    this.time = start
  }

  now(): number {
    return this.time
  }

  setTimeout(fn: () => void, ms: number): FakeHandle {
    this.requested.push(ms)
    const handle: FakeHandle = {
      id: this.#ids++,
      fireAt: Math.max(this.time, this.time + ms - this.earlyMs),
      requestedMs: ms,
      fn,
      unrefCalled: false,
      unref() {
        this.unrefCalled = true
      },
    }
    this.timeouts.set(handle.id, handle)
    return handle
  }

  clearTimeout(handle: unknown): void {
    if (this.timeouts.delete((handle as FakeHandle).id)) this.cleared++
  }

  setImmediate(fn: () => void): void {
    this.immediates.push(fn)
  }

  /** The one pending timeout; throws if there are several (the driver must arm at most one). */
  get armed(): FakeHandle | undefined {
    if (this.timeouts.size > 1) throw new Error(`${this.timeouts.size} real timers armed at once`)
    return [...this.timeouts.values()][0]
  }

  /**
   * Runs the next event: queued immediates first (one), else the earliest timeout, moving time to
   * its fire time. Returns false when nothing is queued.
   */
  step(): boolean {
    const immediate = this.immediates.shift()
    if (immediate !== undefined) {
      immediate()
      return true
    }
    const next = this.armed
    if (next === undefined) return false
    this.timeouts.delete(next.id)
    this.time = Math.max(this.time, next.fireAt)
    next.fn()
    return true
  }

  /** Steps until idle (or `max` events, against runaway loops); returns the number of events. */
  run(max = 100_000): number {
    let events = 0
    while (this.step()) {
      if (++events > max) throw new Error(`more than ${max} timer events`)
    }
    return events
  }
}

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
