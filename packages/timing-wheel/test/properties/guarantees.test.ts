/**
 * The accuracy and cost guarantees as properties: never early, never left behind, and catching up
 * after a stall of any length costs only the timers involved (counted, not timed).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TimingWheel } from '../../src/index.js'
// Wheel levels: a timer cascades at most LEVELS − 1 times, whatever the delay.
import { LEVELS } from '../../src/internal/occupancy.js'

describe('TimingWheel guarantees', () => {
  it('never returns an item before its deadline, and never leaves a due item behind', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0.1, 1, 16, 1000),
        fc.array(
          fc.record({
            delays: fc.array(fc.double({ min: 0, max: 5000, noNaN: true }), { maxLength: 8 }),
            step: fc.oneof(fc.double({ min: 0, max: 3, noNaN: true }), fc.double({ min: 0, max: 2000, noNaN: true })),
          }),
          { minLength: 1, maxLength: 200 },
        ),
        (tickMs, turns) => {
          // A performance.now()-like clock: fractional, arbitrary origin.
          let time = 1234.5678
          const wheel = new TimingWheel<number>({ now: () => time, tickMs })
          const deadlines: number[] = []
          for (const { delays, step } of turns) {
            for (const delay of delays) deadlines.push(wheel.schedule(delay, deadlines.length).deadline)
            time += step
            for (const item of wheel.advance()) expect(deadlines[item]).toBeLessThanOrEqual(time)
            expect(wheel.nextDeadline() ?? Number.POSITIVE_INFINITY).toBeGreaterThan(time)
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it('catches up over a stall of up to 10^12 ms visiting only slots that hold timers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1e12 }), { minLength: 0, maxLength: 20 }),
        fc.integer({ min: 1e9, max: 1e12 }),
        (delays, jump) => {
          let time = 0
          const wheel = new TimingWheel<number>({ now: () => time })
          for (const [i, delay] of delays.entries()) wheel.schedule(delay, i)
          time = jump
          const fired = wheel.advance()
          expect(fired.length + wheel.size).toBe(delays.length)
          const { slotsVisited, cascaded } = wheel.stats()
          // Per timer: at most one slot per level on the way down, plus its level-0 slot.
          expect(slotsVisited).toBeLessThanOrEqual(delays.length * LEVELS)
          expect(cascaded).toBeLessThanOrEqual(delays.length * (LEVELS - 1))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('visits no slot at all when time jumps over an empty wheel', () => {
    let time = 0
    const wheel = new TimingWheel<number>({ now: () => time })
    for (const jump of [1, 1e3, 1e9, 1e15, Number.MAX_SAFE_INTEGER]) {
      time += jump
      expect(wheel.advance()).toEqual([])
    }
    expect(wheel.stats().slotsVisited).toBe(0)
  })

  it('fires 1000 timers spread over 10^9 ms in one advance with a bounded number of slot visits', () => {
    let time = 0
    const wheel = new TimingWheel<number>({ now: () => time })
    for (let i = 0; i < 1000; i++) wheel.schedule(i * 1_000_003, i)
    time = 1e9 + 3e6
    const fired = wheel.advance()
    expect(fired).toEqual(Array.from({ length: 1000 }, (_, i) => i))
    // 10^9 ticks elapsed; the work is a few visits per timer.
    expect(wheel.stats().slotsVisited).toBeLessThan(1000 * LEVELS)
  })
})
