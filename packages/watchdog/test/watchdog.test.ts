import { describe, expect, it } from 'vitest'
import {
  AttemptCancelledError,
  FencedError,
  HandlerTimeoutError,
  Watchdog,
  WatchdogArgumentError,
  type WatchdogError,
} from '../src/index.js'
import { ManualClock, sharedWatchdog } from './fixtures.js'

describe('Watchdog', () => {
  describe('guard()', () => {
    it('arms one deadline per attempt and gives increasing epochs', () => {
      const { watchdog, driver } = sharedWatchdog()
      const a = watchdog.guard({ timeoutMs: 100 })
      const b = watchdog.guard({ timeoutMs: 100 })
      expect([a.epoch < b.epoch, driver.size, watchdog.running, a.state]).toEqual([true, 2, 2, 'running'])
      expect(a.deadline).toBe(100)
    })

    it('rejects bad options with typed errors naming the value and the rule, counting nothing', () => {
      const { watchdog, driver } = sharedWatchdog()
      const bad = [
        [{ timeoutMs: Number.NaN }, 'Expected `timeoutMs` to be a finite number > 0, got `NaN` (number)'],
        [{ timeoutMs: -1 }, 'Expected `timeoutMs` to be a finite number > 0, got `-1` (number)'],
        [{ timeoutMs: '5' }, 'Expected `timeoutMs` to be a finite number > 0, got `"5"` (string)'],
        [{ timeoutMs: Number.POSITIVE_INFINITY }, 'got `Infinity` (number)'],
        [{ timeoutMs: 5, heartbeatMs: 0 }, 'Expected `heartbeatMs` to be a finite number > 0, got `0` (number)'],
        [{ timeoutMs: 5, onTimeout: 1 }, 'Expected `onTimeout` to be a function, got `1` (number)'],
        [null, 'Expected `options` to be an object with `timeoutMs`, got `null` (null)'],
        [{ timeoutMs: 5, now: Number.NaN }, 'Expected `now` to be a finite clock reading in ms, got `NaN` (number)'],
        [{ timeoutMs: 5, now: '3' }, 'Expected `now` to be a finite clock reading in ms, got `"3"` (string)'],
      ] as const
      for (const [options, message] of bad) {
        let error: unknown
        try {
          watchdog.guard(options as never)
        } catch (e) {
          error = e
        }
        expect(error).toBeInstanceOf(WatchdogArgumentError)
        expect((error as WatchdogError).code).toBe('ERR_WATCHDOG_INVALID_ARGUMENT')
        expect((error as Error).message).toContain(message)
      }
      expect([driver.size, watchdog.stats().guarded]).toEqual([0, 0])
    })
  })

  describe('readings given by the caller', () => {
    it('starts the attempt at the reading given to guard(), reading no clock', () => {
      const { watchdog, clock } = sharedWatchdog()
      clock.time = 50
      const a = watchdog.guard({ timeoutMs: 100, now: 40 })
      expect([a.startedAt, a.deadline]).toEqual([40, 140])
    })

    it('judges done(now) / fail(now) by the reading given: past the deadline it lost, even if the clock says otherwise', () => {
      const { watchdog } = sharedWatchdog()
      const a = watchdog.guard({ timeoutMs: 100, now: 0 })
      expect(a.done(100)).toBe(false)
      expect(a.state).toBe('timed-out')
      const b = watchdog.guard({ timeoutMs: 100, now: 0 })
      expect([b.fail(99.9), b.state]).toEqual([true, 'failed'])
    })

    it('ignores a reading that is not a finite number and reads the clock', () => {
      const { watchdog, clock } = sharedWatchdog()
      const a = watchdog.guard({ timeoutMs: 100 })
      clock.time = 150
      expect([a.done(Number.NaN), a.state]).toEqual([false, 'timed-out'])
      const b = watchdog.guard({ timeoutMs: 100 })
      expect([b.done(Number.POSITIVE_INFINITY as number), b.state]).toEqual([true, 'completed'])
    })
  })

  describe('constructor', () => {
    it('rejects bad configuration with typed errors', () => {
      const clock = new ManualClock()
      expect(() => new Watchdog({ graceMs: -1, timers: clock })).toThrow(
        'Expected `options.graceMs` to be a number ≥ 0 (Infinity: never a zombie), got `-1` (number)',
      )
      expect(() => new Watchdog({ timers: { now: () => 0 } as never })).toThrow(
        'Expected `options.timers` to be an object with now(), setTimeout() and clearTimeout(), got `[object]` (object)',
      )
      expect(() => new Watchdog({ timers: clock, scheduler: {} as never })).toThrow(
        'Expected `options.scheduler` to be an object with add() and remove()',
      )
      expect(() => new Watchdog({ timers: clock, onZombie: 'x' as never })).toThrow(WatchdogArgumentError)
      expect(() => new Watchdog({ timers: clock, grace: 1 } as never)).toThrow(
        'Expected `options.grace` to be a known option (timers, scheduler, onTimeout, graceMs, onZombie), got `1` (number)',
      )
    })
  })

  describe('timeout', () => {
    it('marks timed-out, calls onTimeout, then aborts the signal with a HandlerTimeoutError, in one step', () => {
      const steps: string[] = []
      const { watchdog, clock } = sharedWatchdog({
        onTimeout: (attempt, error) => steps.push(`${attempt.state}:${attempt.signal.aborted}:${error.kind}`),
      })
      const attempt = watchdog.guard({ timeoutMs: 50, label: { type: 'order.paid', key: 'o-1', id: 7 } })
      attempt.signal.addEventListener('abort', () => steps.push('aborted'))
      clock.advance(49)
      expect(attempt.state).toBe('running') // never early
      clock.advance(1)
      expect(steps).toEqual(['timed-out:false:deadline', 'aborted'])
      const reason = attempt.signal.reason as HandlerTimeoutError
      expect(reason).toBeInstanceOf(HandlerTimeoutError)
      expect(reason.message).toBe(
        'Handler order.paid (key "o-1", id 7) timed out after 50 ms: its hard deadline is 50 ms (attempt epoch 1)',
      )
      expect([reason.code, reason.elapsedMs, attempt.done(), watchdog.stats().timedOut]).toEqual([
        'ERR_HANDLER_TIMEOUT',
        50,
        false,
        1,
      ])
    })

    it('gives a signal read after the timeout already aborted, with the same reason', () => {
      const { watchdog, clock } = sharedWatchdog()
      const attempt = watchdog.guard({ timeoutMs: 5, label: 'job 9' })
      clock.advance(5)
      expect(attempt.signal.aborted).toBe(true)
      expect((attempt.signal.reason as Error).message).toContain('Handler job 9 timed out after 5 ms')
    })
  })

  describe('heartbeat()', () => {
    it('extends the heartbeat deadline only, without touching the wheel; the hard deadline holds', () => {
      const { watchdog, clock, driver } = sharedWatchdog()
      const attempt = watchdog.guard({ timeoutMs: 100, heartbeatMs: 10 })
      const adds = driver.stats()
      for (let t = 0; t < 99; t++) {
        clock.advance(1)
        attempt.heartbeat()
      }
      expect(attempt.state).toBe('running')
      expect(attempt.heartbeatDeadline).toBe(109)
      expect(attempt.deadline).toBe(100)
      clock.advance(1)
      expect(attempt.state).toBe('timed-out')
      expect((attempt.signal.reason as HandlerTimeoutError).kind).toBe('deadline')
      // 99 heartbeats, yet only one re-arm per 10 ms window (plus the last one, at the hard deadline).
      expect(driver.stats().scheduled - adds.scheduled).toBe(11)
    })

    it('times out when no heartbeat arrives for heartbeatMs', () => {
      const { watchdog, clock } = sharedWatchdog()
      const attempt = watchdog.guard({ timeoutMs: 1_000, heartbeatMs: 10, label: 'scan' })
      clock.advance(8)
      attempt.heartbeat()
      clock.advance(9)
      expect(attempt.state).toBe('running')
      clock.advance(1)
      expect(attempt.state).toBe('timed-out')
      expect((attempt.signal.reason as Error).message).toBe(
        'Handler scan timed out after 18 ms: no heartbeat for 10 ms, the heartbeat timeout is 10 ms (hard deadline 1000 ms) (attempt epoch 1)',
      )
      expect(attempt.heartbeat()).toBe(false)
    })
  })

  describe('cancel()', () => {
    it('aborts with the given reason or an AttemptCancelledError, and wins the race', () => {
      const { watchdog, driver } = sharedWatchdog()
      const a = watchdog.guard({ timeoutMs: 5 })
      expect([a.cancel(), a.cancel(), a.done(), a.state, driver.size]).toEqual([true, false, false, 'cancelled', 0])
      expect(a.signal.reason).toBeInstanceOf(AttemptCancelledError)
      const b = watchdog.guard({ timeoutMs: 5 })
      const signal = b.signal
      b.cancel('shutdown')
      expect([signal.aborted, signal.reason]).toEqual([true, 'shutdown'])
    })
  })

  describe('fence()', () => {
    it('passes while running and throws a FencedError naming the attempt, state and epoch after', () => {
      const { watchdog, clock } = sharedWatchdog()
      const attempt = watchdog.guard({ timeoutMs: 5, label: { type: 'order.paid', key: 'o-1' } })
      expect(() => attempt.fence('ctx.post')).not.toThrow()
      clock.advance(5)
      expect(attempt.isCurrent).toBe(false)
      expect(() => attempt.fence('ctx.post')).toThrow(
        new FencedError('order.paid (key "o-1")', 1, 'timed-out', 'ctx.post').message,
      )
      expect(() => attempt.fence('ctx.post')).toThrow(
        'Fenced off ctx.post of order.paid (key "o-1"): attempt epoch 1 is timed-out, not running',
      )
      expect(watchdog.stats().fencedEffects).toBe(2)
    })
  })

  describe('a timer that fires late', () => {
    it('done() past the deadline loses: the timeout step runs at once, the settle counts late, nothing stays armed', () => {
      const timeouts: string[] = []
      const { watchdog, clock, driver } = sharedWatchdog({
        graceMs: 100,
        onTimeout: (a, e) => timeouts.push(`${a.state} ${e.kind} ${e.elapsedMs}`),
      })
      const attempt = watchdog.guard({ timeoutMs: 10 })
      clock.jump(30) // the event loop was busy: the wheel's timer has not run
      expect(attempt.isCurrent).toBe(true)
      expect(attempt.done()).toBe(false)
      expect(timeouts).toEqual(['timed-out deadline 30'])
      expect(attempt.signal.reason).toBeInstanceOf(HandlerTimeoutError)
      expect([attempt.state, attempt.settledLate, driver.size, clock.pending]).toEqual(['timed-out', true, 0, 0])
      expect(watchdog.stats()).toMatchObject({ completed: 0, timedOut: 1, lateCompletions: 1, zombiesTotal: 0 })
      clock.advance(1_000)
      expect(watchdog.stats().zombiesTotal).toBe(0) // no grace timer: the handler had settled
    })

    it('fail() past a heartbeat deadline loses the same way', () => {
      const { watchdog, clock } = sharedWatchdog()
      const attempt = watchdog.guard({ timeoutMs: 1_000, heartbeatMs: 10 })
      clock.jump(11)
      expect(attempt.fail()).toBe(false)
      expect((attempt.signal.reason as HandlerTimeoutError).kind).toBe('heartbeat')
      expect(watchdog.stats()).toMatchObject({ failed: 0, timedOut: 1, lateCompletions: 1 })
    })

    it('fence() past the deadline times the attempt out and refuses the effect; its grace timer is armed', () => {
      const { watchdog, clock, driver } = sharedWatchdog({ graceMs: 100 })
      const attempt = watchdog.guard({ timeoutMs: 10 })
      clock.jump(10)
      expect(() => attempt.fence('ctx.post')).toThrow(FencedError)
      expect([attempt.state, watchdog.stats().fencedEffects, driver.size]).toEqual(['timed-out', 1, 1])
      clock.advance(100)
      expect(watchdog.zombieCount).toBe(1)
    })

    it('heartbeat() past a deadline does not revive the attempt', () => {
      const { watchdog, clock } = sharedWatchdog()
      const attempt = watchdog.guard({ timeoutMs: 1_000, heartbeatMs: 10 })
      clock.jump(15)
      expect(attempt.heartbeat()).toBe(false)
      expect(attempt.state).toBe('timed-out')
    })
  })

  describe('zombies', () => {
    it('lists a timed-out attempt unsettled after graceMs, and drops it when it settles late', () => {
      const zombies: string[] = []
      const { watchdog, clock, driver } = sharedWatchdog({ graceMs: 100, onZombie: (z) => zombies.push(z.label) })
      const attempt = watchdog.guard({ timeoutMs: 10, label: 'slow call' })
      clock.advance(109)
      expect(watchdog.zombieCount).toBe(0)
      clock.advance(1)
      expect(zombies).toEqual(['slow call'])
      expect(watchdog.zombies().map((z) => [z.epoch, z.label, z.ageMs])).toEqual([[1, 'slow call', 110]])
      clock.advance(5)
      expect(attempt.done()).toBe(false)
      expect(attempt.fail()).toBe(false) // counted once
      expect([watchdog.zombieCount, watchdog.lateCompletions, driver.size, attempt.settledLate]).toEqual([
        0,
        1,
        0,
        true,
      ])
    })

    it('never lists an attempt that settles within the grace period, and disarms its grace timer', () => {
      const { watchdog, clock, driver } = sharedWatchdog({ graceMs: 100 })
      const attempt = watchdog.guard({ timeoutMs: 10 })
      clock.advance(50)
      expect(driver.size).toBe(1) // the grace timer
      attempt.done()
      expect([driver.size, watchdog.zombieCount, watchdog.lateCompletions]).toEqual([0, 0, 1])
      clock.advance(1_000)
      expect(watchdog.stats().zombiesTotal).toBe(0)
    })
  })

  describe('sharing a driver', () => {
    it('routes only its own items; the owner keeps the others', () => {
      const { watchdog, clock, driver, others } = sharedWatchdog()
      driver.schedule(10, 'reminder')
      const attempt = watchdog.guard({ timeoutMs: 10 })
      clock.advance(10)
      expect([others, attempt.state]).toEqual([['reminder'], 'timed-out'])
    })
  })

  describe('standalone', () => {
    it('creates its own driver from a TimerProvider and leaves nothing armed when idle', () => {
      const clock = new ManualClock()
      const timedOut: number[] = []
      const watchdog = new Watchdog({
        timers: clock,
        graceMs: Number.POSITIVE_INFINITY,
        onTimeout: (a) => timedOut.push(a.epoch),
      })
      const a = watchdog.guard({ timeoutMs: 20 })
      const b = watchdog.guard({ timeoutMs: 30 })
      expect([watchdog.pendingTimers, clock.pending]).toEqual([2, 1])
      a.done()
      clock.advance(30)
      expect([timedOut, b.state, watchdog.pendingTimers, clock.pending]).toEqual([[b.epoch], 'timed-out', 0, 0])
    })
  })
})
