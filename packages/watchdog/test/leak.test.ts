import { describe, expect, it } from 'vitest'
import { Watchdog } from '../src/index.js'
import { ManualClock, sharedWatchdog } from './fixtures.js'

const N = 100_000
const gc = (globalThis as { gc?: () => void }).gc

describe('Watchdog leaks', () => {
  it('10^5 attempts that time out and settle late leave no wheel entries, timers or zombies', () => {
    const { watchdog, clock, driver } = sharedWatchdog({ graceMs: 50 })
    for (let i = 0; i < N; i++) {
      const attempt = watchdog.guard({ timeoutMs: 10 + (i % 7) })
      if (i % 2 === 0) void attempt.signal // half of them create a controller
    }
    clock.advance(20)
    expect(watchdog.stats()).toMatchObject({ timedOut: N, running: 0 })
    clock.advance(100) // every grace period over: all zombies
    expect(watchdog.zombieCount).toBe(N)
    // The handlers finally settle: every zombie is removed and counted once.
    for (const zombie of watchdog.zombies()) zombie.attempt.done()
    expect([watchdog.zombieCount, watchdog.lateCompletions, driver.size, clock.pending]).toEqual([0, N, 0, 0])
  }, 30_000) // 10^5 attempts: seconds on a loaded CI machine

  it('standalone: 10^5 timeouts leave the own driver empty and no timer armed', () => {
    const clock = new ManualClock()
    const watchdog = new Watchdog({ timers: clock, graceMs: Number.POSITIVE_INFINITY })
    for (let i = 0; i < N; i++) watchdog.guard({ timeoutMs: 5 })
    clock.advance(5)
    expect([watchdog.stats().timedOut, watchdog.pendingTimers, clock.pending]).toEqual([N, 0, 0])
  }, 30_000) // 10^5 attempts: seconds on a loaded CI machine

  it.skipIf(gc === undefined)('heap returns near baseline after 10^5 timed-out attempts (--expose-gc)', () => {
    const run = gc as () => void
    const clock = new ManualClock()
    const watchdog = new Watchdog({ timers: clock, graceMs: 0 })
    const cycle = (): void => {
      for (let i = 0; i < N; i++) {
        const attempt = watchdog.guard({ timeoutMs: 5, label: 'leak' })
        void attempt.signal.aborted
      }
      clock.advance(5)
      for (const zombie of watchdog.zombies()) zombie.attempt.done()
    }
    cycle() // warm up: pools and code at their steady size
    run()
    const baseline = process.memoryUsage().heapUsed
    cycle()
    run()
    expect(process.memoryUsage().heapUsed - baseline).toBeLessThan(2 * 1024 * 1024)
  })
})
