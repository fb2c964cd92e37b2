import { describe, expect, it } from 'vitest'
import { TimingWheel, WheelFullError } from '../src/index.js'

const MAX = Number.MAX_SAFE_INTEGER

/** A wheel on a virtual clock the test moves by assigning `clock.time`. */
function virtualWheel<T>(options: { tickMs?: number; maxPending?: number; start?: number } = {}) {
  const clock = { time: options.start ?? 0 }
  const wheel = new TimingWheel<T>({
    now: () => clock.time,
    ...(options.tickMs === undefined ? {} : { tickMs: options.tickMs }),
    ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending }),
  })
  return { clock, wheel }
}

describe('TimingWheel', () => {
  describe('schedule()', () => {
    it('returns a pending handle with the deadline now() + delayMs and the item', () => {
      const { clock, wheel } = virtualWheel<string>({ start: 10.5 })
      const t = wheel.schedule(100, 'x')
      expect([t.deadline, t.item, t.pending, wheel.size]).toEqual([110.5, 'x', true, 1])
      clock.time = 110.5
      expect(wheel.advance()).toEqual(['x'])
      expect(t.pending).toBe(false)
    })

    it('accepts a zero delay (due at the next advance) and Number.MAX_SAFE_INTEGER', () => {
      const { clock, wheel } = virtualWheel<string>()
      const huge = wheel.schedule(MAX, 'huge')
      wheel.schedule(0, 'now')
      expect(wheel.advance()).toEqual(['now'])
      clock.time = MAX - 1
      expect(wheel.advance()).toEqual([])
      clock.time = MAX
      expect(wheel.advance()).toEqual(['huge'])
      expect(huge.pending).toBe(false)
    })

    it('handles deadlines beyond the top level (fine ticks) through the overflow list, exactly', () => {
      const { clock, wheel } = virtualWheel<string>({ tickMs: 0.001, start: 1 })
      const t = wheel.schedule(MAX, 'far')
      wheel.schedule(2 ** 50, 'near')
      expect(wheel.nextDeadline()).toBe(1 + 2 ** 50)
      clock.time = t.deadline - 4 // the largest step below the deadline at this magnitude
      expect(wheel.advance()).toEqual(['near'])
      expect(wheel.nextDeadline()).toBe(t.deadline)
      clock.time = t.deadline
      expect(wheel.advance()).toEqual(['far'])
    })

    it('handles absurdly far absolute times (clamped ticks) without firing early', () => {
      const { clock, wheel } = virtualWheel<string>()
      wheel.scheduleAt(1e300, 'far')
      clock.time = 1e299
      expect(wheel.advance()).toEqual([])
      clock.time = 1e300
      expect(wheel.advance()).toEqual(['far'])
    })
  })

  describe('scheduleAt()', () => {
    it('accepts a time in the past: due at the next advance, before later deadlines', () => {
      const { clock, wheel } = virtualWheel<string>({ start: 5000 })
      wheel.scheduleAt(5000.5, 'later')
      wheel.scheduleAt(10, 'past')
      clock.time = 5001
      expect(wheel.advance()).toEqual(['past', 'later'])
    })
  })

  describe('advance()', () => {
    it('returns due items in deadline order, ties in schedule order, across levels', () => {
      const { clock, wheel } = virtualWheel<string>()
      wheel.scheduleAt(300_000, 'a1') // high level, scheduled first
      wheel.scheduleAt(299_999.5, 'early')
      clock.time = 299_990
      wheel.scheduleAt(300_000, 'a2') // same deadline, lower level, scheduled later
      wheel.scheduleAt(300_000, 'a3')
      clock.time = 400_000
      expect(wheel.advance()).toEqual(['early', 'a1', 'a2', 'a3'])
    })

    it('is exact inside a tick: a deadline of 10.7 is not due at 10.5, and is at 10.7', () => {
      const { wheel } = virtualWheel<string>({ tickMs: 5 })
      wheel.scheduleAt(10.7, 'x')
      wheel.scheduleAt(10.2, 'y')
      expect(wheel.advance(10.5)).toEqual(['y'])
      expect(wheel.advance(10.69)).toEqual([])
      expect(wheel.advance(10.7)).toEqual(['x'])
    })

    it('returns at most `limit` items, the earliest; the rest stay pending, cancellable, and come next', () => {
      const { clock, wheel } = virtualWheel<number>()
      const handles = Array.from({ length: 10 }, (_, i) => wheel.schedule(10 - i * 0.5, i))
      clock.time = 100
      expect(wheel.advance(100, 3)).toEqual([9, 8, 7])
      expect(handles[6]?.cancel()).toBe(true)
      expect(wheel.advance(100, 3)).toEqual([5, 4, 3])
      expect(wheel.advance()).toEqual([2, 1, 0])
    })

    it('accepts an earlier time than a previous call and returns only what is due at it', () => {
      const { wheel } = virtualWheel<string>()
      wheel.scheduleAt(50, 'b')
      expect(wheel.advance(100)).toEqual(['b'])
      wheel.scheduleAt(60, 'c')
      wheel.scheduleAt(20, 'a')
      expect(wheel.advance(40)).toEqual(['a'])
      expect(wheel.advance(60)).toEqual(['c'])
    })

    it('lets the caller schedule while processing returned items: due-now timers come next advance', () => {
      const { clock, wheel } = virtualWheel<string>()
      wheel.schedule(5, 'first')
      clock.time = 5
      const seen: string[] = []
      for (const item of wheel.advance()) {
        seen.push(item)
        wheel.schedule(0, `${item} → follow-up`)
        wheel.schedule(1, `${item} → later`)
      }
      expect(wheel.advance()).toEqual(['first → follow-up'])
      clock.time = 6
      expect(wheel.advance()).toEqual(['first → later'])
      expect(seen).toEqual(['first'])
    })

    it('ignores the cancel of an item it already returned: false, no effect', () => {
      const { clock, wheel } = virtualWheel<string>()
      const a = wheel.schedule(1, 'a')
      const b = wheel.schedule(1, 'b')
      clock.time = 1
      const due = wheel.advance()
      expect(due).toEqual(['a', 'b'])
      // Processing `a` decides `b` is obsolete: too late, it was returned in the same batch.
      expect(b.cancel()).toBe(false)
      expect(a.cancel()).toBe(false)
      expect(wheel.stats().cancelled).toBe(0)
    })
  })

  describe('cancel() / remove()', () => {
    it('returns true once, then false', () => {
      const { clock, wheel } = virtualWheel<string>()
      const t = wheel.schedule(10, 'x')
      expect(t.cancel()).toBe(true)
      expect(t.cancel()).toBe(false)
      expect(t.pending).toBe(false)
      clock.time = 20
      expect(wheel.advance()).toEqual([])
    })

    it('leaves a timer alone that reuses the node of a stale handle (generation check)', () => {
      const { clock, wheel } = virtualWheel<string>()
      const old = wheel.schedule(10, 'old')
      old.cancel()
      const reused = wheel.schedule(10, 'new') // takes the node `old` had
      expect(reused.id % 2 ** 24).toBe(old.id % 2 ** 24)
      expect(old.cancel()).toBe(false)
      expect(old.pending).toBe(false)
      expect(reused.pending).toBe(true)
      clock.time = 10
      expect(wheel.advance()).toEqual(['new'])
      const next = wheel.schedule(5, 'after fire')
      expect(reused.cancel()).toBe(false)
      expect(next.pending).toBe(true)
    })

    it('refuses unknown and malformed ids', () => {
      const { wheel } = virtualWheel<string>()
      const id = wheel.add(10, 'x')
      for (const bad of [-1, 0, 1.5, Number.NaN, id + 1, id + 2 ** 24, MAX, Number.POSITIVE_INFINITY]) {
        expect(wheel.remove(bad)).toBe(false)
        expect(wheel.has(bad)).toBe(false)
      }
      expect(wheel.has(id)).toBe(true)
      expect(wheel.remove(id)).toBe(true)
    })
  })

  describe('nextDeadline()', () => {
    it('is the exact earliest deadline, kept right through cancels and advances', () => {
      const { wheel } = virtualWheel<string>()
      expect(wheel.nextDeadline()).toBeUndefined()
      const a = wheel.scheduleAt(70_000.25, 'a')
      wheel.scheduleAt(90_000, 'b')
      expect(wheel.nextDeadline()).toBe(70_000.25)
      a.cancel()
      expect(wheel.nextDeadline()).toBe(90_000)
      wheel.scheduleAt(80_000, 'c')
      expect(wheel.nextDeadline()).toBe(80_000)
      expect(wheel.advance(85_000)).toEqual(['c'])
      expect(wheel.nextDeadline()).toBe(90_000)
      wheel.advance(90_000)
      expect(wheel.nextDeadline()).toBeUndefined()
    })
  })

  describe('clear()', () => {
    it('returns every pending item in deadline order and leaves stale handles behind', () => {
      const { wheel } = virtualWheel<string>()
      const t = wheel.schedule(MAX, 'last')
      wheel.schedule(5, 'b')
      wheel.schedule(1e6, 'c')
      wheel.schedule(5, 'b2')
      wheel.scheduleAt(0, 'a')
      expect(wheel.clear()).toEqual(['a', 'b', 'b2', 'c', 'last'])
      expect([wheel.size, t.pending, t.cancel(), wheel.nextDeadline()]).toEqual([0, false, false, undefined])
      expect(wheel.advance(MAX)).toEqual([])
    })
  })

  describe('maxPending', () => {
    it('refuses one more timer with WheelFullError naming both numbers, scheduling nothing', () => {
      const { wheel } = virtualWheel<number>({ maxPending: 3 })
      const handles = [1, 2, 3].map((i) => wheel.schedule(i, i))
      expect(() => wheel.schedule(4, 4)).toThrow(WheelFullError)
      expect(() => wheel.add(4, 4)).toThrow(
        'Timing wheel is full: cannot schedule another timer (3 pending, maxPending = 3)',
      )
      expect(wheel.size).toBe(3)
      handles[0]?.cancel()
      expect(wheel.schedule(4, 4).pending).toBe(true)
      expect(wheel.maxPending).toBe(3)
    })
  })

  describe('stats()', () => {
    it('adds up: scheduled = pending + fired + cancelled + cleared', () => {
      const { clock, wheel } = virtualWheel<number>()
      for (let i = 0; i < 100; i++) wheel.schedule(i * 37, i)
      for (let i = 0; i < 100; i += 3) wheel.remove(wheel.add(i, i))
      clock.time = 1000
      wheel.advance()
      wheel.clear()
      wheel.schedule(1, 0)
      const s = wheel.stats()
      expect(s.scheduled).toBe(s.pending + s.fired + s.cancelled + s.cleared)
      expect([s.pending, s.fired, s.cancelled, s.cleared]).toEqual([1, 28, 34, 72])
    })

    it('reuses freed nodes: storage does not grow under schedule/cancel churn', () => {
      const { wheel } = virtualWheel<number>()
      const initial = wheel.stats().capacity
      for (let i = 0; i < 100_000; i++) wheel.schedule(i % 5000, i).cancel()
      expect(wheel.stats().capacity).toBe(initial)
    })
  })
})
