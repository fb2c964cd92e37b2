import { describe, expect, it } from 'vitest'
import { type TimerProvider, WheelDriver, type WheelDriverOptions } from '../src/index.js'
import { FakeTimers } from './fixtures.js'

/** A driver on fake timers that records every delivery with the time it happened. */
function fakeDriver(options: Partial<WheelDriverOptions<string>> = {}, start = 0) {
  const timers = new FakeTimers(start)
  const batches: { at: number; items: string[] }[] = []
  const driver = new WheelDriver<string>({
    onDue: (items) => batches.push({ at: timers.now(), items }),
    timers,
    ...options,
  })
  return { timers, batches, driver, delivered: () => batches.flatMap((b) => b.items) }
}

describe('WheelDriver', () => {
  describe('arming', () => {
    it('arms no real timer while empty and exactly one for the earliest deadline', () => {
      const { timers, driver } = fakeDriver()
      expect(timers.armed).toBeUndefined()
      driver.schedule(100, 'a')
      expect([timers.armed?.requestedMs, driver.armedDeadline]).toEqual([100, 100])
      driver.schedule(500, 'b') // later: no re-arm
      driver.schedule(100, 'c') // same: no re-arm
      expect(timers.requested).toEqual([100])
      driver.schedule(40, 'd') // earlier: re-arm, still one timer
      expect([timers.armed?.requestedMs, timers.cleared, timers.timeouts.size]).toEqual([40, 1, 1])
    })

    it('disarms when the last timer is cancelled, and not before', () => {
      const { timers, driver } = fakeDriver()
      const a = driver.schedule(10, 'a')
      const b = driver.schedule(20, 'b')
      a.cancel()
      expect(timers.armed?.requestedMs).toBe(10) // a wasted wake-up is cheaper than re-arming per cancel
      expect(b.cancel()).toBe(true)
      expect([timers.armed, driver.armedDeadline]).toEqual([undefined, undefined])
      expect(b.cancel()).toBe(false)
    })

    it('re-arms after each delivery for the next deadline, and none once empty', () => {
      const { timers, batches, driver } = fakeDriver()
      driver.schedule(10, 'a')
      driver.schedule(25, 'b')
      timers.step()
      expect(batches).toEqual([{ at: 10, items: ['a'] }])
      expect(timers.armed?.requestedMs).toBe(15)
      timers.step()
      expect(batches[1]).toEqual({ at: 25, items: ['b'] })
      expect(timers.armed).toBeUndefined()
    })

    it('rounds fractional waits up to whole ms and reaches deadlines beyond 24.8 days in steps', () => {
      const { timers, batches, driver } = fakeDriver({}, 0.25)
      driver.schedule(2.5, 'soon')
      expect(timers.armed?.requestedMs).toBe(3)
      timers.run()
      expect(batches[0]?.at).toBe(3.25) // the 3 ms timer: 0.5 ms late by the rounding, never early
      const month = 30 * 24 * 3600 * 1000
      driver.schedule(month, 'late')
      expect(timers.armed?.requestedMs).toBe(2 ** 31 - 1)
      timers.run()
      expect(batches.map((b) => b.items)).toEqual([['soon'], ['late']])
      expect(batches[1]?.at).toBe(3.25 + month)
      expect(driver.stats().emptyWakeups).toBe(1) // the one intermediate wake-up at 2^31 − 1 ms
    })

    it('unrefs the real timer when asked', () => {
      const { timers, driver } = fakeDriver({ unref: true })
      driver.schedule(10, 'a')
      expect(timers.armed?.unrefCalled).toBe(true)
      const plain = fakeDriver()
      plain.driver.schedule(10, 'a')
      expect(plain.timers.armed?.unrefCalled).toBe(false)
    })
  })

  describe('never early', () => {
    it('delivers nothing before the deadline even when the real timer fires 0.9 ms early', () => {
      const { timers, batches, driver } = fakeDriver({}, 0.3)
      timers.earlyMs = 0.9
      for (let i = 0; i < 50; i++) driver.schedule(1 + i * 0.37, `t${i}`)
      timers.run()
      expect(batches.flatMap((b) => b.items)).toHaveLength(50)
      for (const { at, items } of batches) {
        for (const item of items) expect(at).toBeGreaterThanOrEqual(0.3 + 1 + Number(item.slice(1)) * 0.37)
      }
      expect(driver.stats().emptyWakeups).toBeGreaterThan(0)
    })
  })

  describe('budget', () => {
    it('delivers at most `budget` items per call, the rest on following turns via setImmediate', () => {
      const { timers, batches, driver } = fakeDriver({ budget: 3 })
      const handles = Array.from({ length: 10 }, (_, i) => driver.schedule(5, `t${i}`))
      timers.step() // the real timer: first batch, then a continuation is queued
      expect(batches.map((b) => b.items)).toEqual([['t0', 't1', 't2']])
      expect([timers.immediates.length, timers.timeouts.size]).toEqual([1, 0])
      expect(handles[4]?.cancel()).toBe(true) // still pending between turns, so still cancellable
      timers.run()
      expect(batches.map((b) => b.items)).toEqual([
        ['t0', 't1', 't2'],
        ['t3', 't5', 't6'],
        ['t7', 't8', 't9'],
      ])
      expect(timers.armed).toBeUndefined()
    })
  })

  describe('scheduling from onDue', () => {
    it('delivers a timer due at once on the next turn and arms for a later one', () => {
      const timers = new FakeTimers()
      const seen: string[] = []
      const driver: WheelDriver<string> = new WheelDriver<string>({
        timers,
        onDue: (items) => {
          for (const item of items) {
            seen.push(`${item}@${timers.now()}`)
            if (item === 'a') {
              driver.schedule(0, 'a-now')
              driver.schedule(7, 'a-later')
            }
          }
        },
      })
      driver.schedule(10, 'a')
      timers.step()
      // Within the budget, the due-at-once timer goes out in the same wake-up, in a second call.
      expect(seen).toEqual(['a@10', 'a-now@10'])
      expect([timers.immediates.length, timers.armed?.requestedMs]).toEqual([0, 7])
      timers.run()
      expect(seen).toEqual(['a@10', 'a-now@10', 'a-later@17'])
    })

    it('delivers timers that fell due during onDue in the same turn, then yields at the budget', () => {
      const timers = new FakeTimers()
      const calls: string[][] = []
      const driver = new WheelDriver<string>({
        timers,
        budget: 3,
        onDue: (items) => {
          calls.push(items)
          timers.time += 1 // onDue takes 1 ms: the next timer falls due meanwhile
        },
      })
      for (const [i, at] of [10, 11, 12, 13].entries()) driver.scheduleAt(at, `t${i}`)
      timers.step()
      expect(calls).toEqual([['t0'], ['t1'], ['t2']])
      expect(timers.immediates).toHaveLength(1) // budget of 3 spent: t3 (due) waits for the next turn
      timers.run()
      expect(calls.at(-1)).toEqual(['t3'])
    })
  })

  describe('errors in onDue', () => {
    it('re-arms and rethrows: the driver keeps working', () => {
      const timers = new FakeTimers()
      const driver = new WheelDriver<string>({
        timers,
        onDue: (items) => {
          if (items.includes('boom')) throw new Error('handler failed')
        },
      })
      driver.schedule(1, 'boom')
      driver.schedule(5, 'fine')
      expect(() => timers.step()).toThrow('handler failed')
      expect(timers.armed?.requestedMs).toBe(4)
      timers.run()
      expect(driver.stats().fired).toBe(2)
    })
  })

  describe('clear()', () => {
    it('disarms, returns the pending items in order, and ignores a queued continuation', () => {
      const { timers, batches, driver } = fakeDriver({ budget: 1 })
      driver.schedule(1, 'a')
      driver.schedule(1, 'b')
      driver.schedule(50, 'c')
      timers.step()
      expect(timers.immediates).toHaveLength(1)
      expect(driver.clear()).toEqual(['b', 'c'])
      timers.run()
      expect(batches.map((b) => b.items)).toEqual([['a']])
      driver.schedule(5, 'again')
      timers.run()
      expect(batches.at(-1)?.items).toEqual(['again'])
    })
  })

  describe('timer providers', () => {
    it('falls back to setTimeout(fn, 0) without setImmediate', () => {
      const timers = new FakeTimers()
      const provider: TimerProvider = {
        now: () => timers.now(),
        setTimeout: (fn, ms) => timers.setTimeout(fn, ms),
        clearTimeout: (h) => timers.clearTimeout(h),
      }
      const seen: string[][] = []
      const driver = new WheelDriver<string>({ timers: provider, budget: 1, onDue: (items) => seen.push(items) })
      driver.schedule(3, 'a')
      driver.schedule(3, 'b')
      timers.run()
      expect(seen).toEqual([['a'], ['b']])
      expect(timers.requested).toEqual([3, 0])
    })

    it('takes a Clock-shaped object (now, setTimeout, clearTimeout, setImmediate)', () => {
      // The shape of @flowing/core's Clock, declared here to keep this package free of dependencies.
      interface Clock {
        now(): number
        setTimeout(fn: () => void, ms: number): unknown
        clearTimeout(handle: unknown): void
        setImmediate(fn: () => void): void
      }
      const clock: Clock = new FakeTimers(100)
      const driver = new WheelDriver<string>({ timers: clock, onDue: () => {} })
      expect(driver.schedule(5, 'x').deadline).toBe(105)
    })
  })

  it('exposes size, maxPending, has() and nextDeadline()', () => {
    const { driver } = fakeDriver({ maxPending: 10 })
    const id = driver.add(40, 'x')
    expect([driver.size, driver.maxPending, driver.has(id), driver.nextDeadline()]).toEqual([1, 10, true, 40])
    expect(driver.remove(id)).toBe(true)
    expect(driver.has(id)).toBe(false)
  })
})
