/**
 * Test helpers: a manual clock that is a TimerProvider (time moves only when a test says so), and a
 * watchdog standing on a driver the test owns, as a loop would share one.
 */
import { type TimerProvider, WheelDriver } from '@flowing/timing-wheel'
import { type Attempt, Watchdog, type WatchdogOptions } from '../src/index.js'

interface Pending {
  readonly at: number
  readonly seq: number
  readonly fn: () => void
}

/** Virtual ms time; timers fire in (due time, arming order) when `advance` passes them. */
export class ManualClock implements TimerProvider {
  time = 0
  #seq = 0
  readonly #timers = new Map<number, Pending>()
  #immediates: (() => void)[] = []

  now(): number {
    return this.time
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const seq = ++this.#seq
    this.#timers.set(seq, { at: this.time + Math.max(0, ms), seq, fn })
    return seq
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }

  setImmediate(fn: () => void): void {
    this.#immediates.push(fn)
  }

  /** Real timers and immediates still pending: 0 means nothing is armed. */
  get pending(): number {
    return this.#timers.size + this.#immediates.length
  }

  /** Moves time forward by `ms`, firing each timer at its due time, in order. */
  advance(ms: number): void {
    const target = this.time + ms
    for (;;) {
      this.#runImmediates()
      const next = this.#next()
      if (next === undefined || next.at > target) break
      this.#timers.delete(next.seq)
      this.time = Math.max(this.time, next.at)
      next.fn()
    }
    this.time = target
    this.#runImmediates()
  }

  /** Moves time without firing anything: the event loop was blocked (a synchronous spin). */
  jump(ms: number): void {
    this.time += ms
  }

  #next(): Pending | undefined {
    let best: Pending | undefined
    for (const t of this.#timers.values()) if (best === undefined || t.at < best.at) best = t
    return best
  }

  #runImmediates(): void {
    while (this.#immediates.length > 0) {
      const batch = this.#immediates
      this.#immediates = []
      for (const fn of batch) fn()
    }
  }
}

/** A watchdog on a shared driver (items: attempts and strings), routed the way a loop would. */
export function sharedWatchdog(options: Omit<WatchdogOptions, 'timers' | 'scheduler'> = {}) {
  const clock = new ManualClock()
  const others: string[] = []
  let watchdog: Watchdog | undefined
  const driver = new WheelDriver<Attempt | string>({
    timers: clock,
    onDue: (items) => {
      for (const item of items) {
        if (Watchdog.owns(item)) watchdog?.onDue(item)
        else others.push(item)
      }
    },
  })
  watchdog = new Watchdog({ ...options, timers: clock, scheduler: driver })
  return { clock, driver, watchdog, others }
}
