import {
  type Clock,
  createLoop,
  type IdempotencyStore,
  type JournalBatch,
  type LedgerEntry,
  type LoopOptions,
  MemoryStore,
  type MetricsSnapshot,
  type TimerHandle,
  VirtualClock,
} from '../src/index.js'

/** The message map the unit tests share. */
export interface Messages {
  'order.paid': { orderId: string; amount: number }
  'order.updated': { orderId: string; status: 'paid' | 'refunded' | 'pending' }
  work: number
}

/** A loop on virtual time, plus the clock that drives it. */
export function virtualLoop(options: LoopOptions = {}) {
  const clock = new VirtualClock()
  const loop = createLoop<Messages>({ clock, logger: false, ...options })
  return { clock, loop }
}

/** Runs `fn`, returns what it threw (fails the test if it did not throw). */
export function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

/** Collects errors the loop re-throws on a microtask (as it does for throwing listeners and hooks). */
export function catchRethrown(): { errors: unknown[]; restore: () => void } {
  const errors: unknown[] = []
  const original = globalThis.queueMicrotask
  globalThis.queueMicrotask = (fn) =>
    original(() => {
      try {
        fn()
      } catch (error) {
        errors.push(error)
      }
    })
  return { errors, restore: () => (globalThis.queueMicrotask = original) }
}

/** Messages that reached an outcome (I1: equals `accepted` at rest). */
export function ended(c: MetricsSnapshot['counters']): number {
  return c.succeeded + c.deadLettered + c.requestFailed + c.dropped + c.cancelled + c.snapshotted
}

/**
 * An async idempotency ledger over `entries` whose claims answer after `delayMs` of virtual time. With
 * `applyOnSend` the claim takes effect when it is sent (as Redis does) and only the answer is late;
 * otherwise the whole claim happens when it answers.
 */
export function asyncLedger(
  clock: VirtualClock,
  entries: Map<string, LedgerEntry>,
  delayMs: number,
  applyOnSend = false,
): IdempotencyStore {
  const decide = (key: string, reclaimFailed: boolean) => {
    const found = entries.get(key)
    if (found !== undefined && !(found.state === 'failed' && reclaimFailed)) return found
    entries.set(key, { state: 'processing' })
    return undefined
  }
  return {
    claim: async (key, _ttlMs, reclaimFailed) => {
      if (applyOnSend) {
        const answer = decide(key, reclaimFailed)
        await clock.sleep(delayMs)
        return answer
      }
      await clock.sleep(delayMs)
      return decide(key, reclaimFailed)
    },
    set: async (key, entry) => {
      entries.set(key, entry)
    },
    release: async (key) => {
      entries.delete(key)
    },
  }
}

/**
 * A virtual clock on which synchronous work takes time: {@link BusyClock.burn} moves `now()` forward
 * at once, as a busy listener or a GC pause does on a real clock, and timers fire late by as much,
 * never early. `advance()` and `run()` drive its timers as {@link VirtualClock}'s do.
 */
export class BusyClock implements Clock {
  readonly virtual = new VirtualClock()
  #burnt = 0

  now(): number {
    return this.virtual.now() + this.#burnt
  }

  wallNow(): number {
    return this.virtual.wallNow() + this.#burnt
  }

  /** Spends `ms` of the clock's time at once (a busy-wait). */
  burn(ms: number): void {
    this.#burnt += ms
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.virtual.setTimeout(fn, ms)
  }

  clearTimeout(handle: TimerHandle): void {
    this.virtual.clearTimeout(handle)
  }

  setImmediate(fn: () => void): void {
    this.virtual.setImmediate(fn)
  }

  sleep(ms: number): Promise<void> {
    return this.virtual.sleep(ms)
  }

  advance(ms: number): Promise<void> {
    return this.virtual.advance(ms)
  }

  run(): Promise<number> {
    return this.virtual.run()
  }
}

/**
 * The first window of `perMs` (a span shorter than `perMs`, less `tolerance`) holding more than `max`
 * of `times`, as a sentence; undefined when there is none.
 */
export function overWindow(times: readonly number[], max: number, perMs: number, tolerance = 0): string | undefined {
  const sorted = [...times].sort((a, b) => a - b)
  for (let i = 0; i + max < sorted.length; i++) {
    const a = sorted[i] as number
    const b = sorted[i + max] as number
    if (b - a < perMs - tolerance) {
      return `${max + 1} entries within ${b - a} ms < ${perMs}: ${sorted.slice(i, i + max + 1).join(',')}`
    }
  }
  return undefined
}

/** The reference journal store, whose commits fail (`disk full`) while `failing` is set. */
export class FlakyStore extends MemoryStore {
  failing = false

  override commit(batch: JournalBatch): void {
    if (this.failing) throw new Error('disk full')
    super.commit(batch)
  }
}
