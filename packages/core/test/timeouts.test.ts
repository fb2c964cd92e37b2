import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  FencedError,
  HandlerTimeoutError,
  InvalidArgumentError,
  NonRetryableError,
  TimeoutBreakerOpenError,
  UnknownMessageTypeError,
  VirtualClock,
} from '../src/index.js'
import { TimeoutBreakers } from '../src/pool/timeout-breakers.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('timeoutMs', () => {
    it('fails a handler that misses its deadline and aborts its signal; its slot stays held until it settles', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, timeoutMs: 50 })
      const events: string[] = []
      const reasons: unknown[] = []
      loop.events.on('failed', (m, e) => events.push(`failed ${m.payload} ${(e as Error).name} @${clock.now()}`))
      loop.events.on('started', (m) => events.push(`started ${m.payload} @${clock.now()}`))
      loop.on('work', async (m, ctx) => {
        ctx.signal.addEventListener('abort', () => reasons.push(ctx.signal.reason))
        await clock.sleep(m.payload === 1 ? 500 : 10) // 1 hangs on a slow dependency
      })
      loop.post('work', 1, { key: 'k' })
      loop.post('work', 2, { key: 'k' })
      await clock.run()
      expect(events).toEqual(['started 1 @0', 'failed 1 HandlerTimeoutError @50', 'started 2 @500'])
      expect(reasons).toHaveLength(1)
      expect(reasons[0]).toBeInstanceOf(HandlerTimeoutError)
      expect((reasons[0] as Error).message).toContain('work')
      expect(loop.metrics().counters).toMatchObject({
        accepted: 2,
        succeeded: 1,
        failed: 1,
        timedOut: 1,
        lateCompletions: 1, // handler 1 settled at 500 ms: swallowed, counted once
      })
    })

    it('fences effects a timed-out handler tries through ctx, and counts them', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 20 })
      const fenced: unknown[] = []
      loop.on('order.paid', async (m, ctx) => {
        await clock.sleep(100)
        try {
          ctx.post('order.updated', { orderId: m.payload.orderId, status: 'paid' })
        } catch (error) {
          fenced.push(error)
        }
      })
      loop.on('order.updated', () => {})
      loop.post('order.paid', { orderId: 'o-1', amount: 1 }, { key: 'o-1' })
      await clock.run()
      expect(fenced).toHaveLength(1)
      expect(fenced[0]).toBeInstanceOf(FencedError)
      expect(loop.metrics().counters).toMatchObject({ accepted: 1, fenced: 1, timedOut: 1 })
    })

    it('uses the per-type timeout over the loop default; Infinity disables it', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 10 })
      loop.on('work', async () => {
        await clock.sleep(30)
      })
      loop.on(
        'order.paid',
        async () => {
          await clock.sleep(30)
        },
        { timeoutMs: Number.POSITIVE_INFINITY },
      )
      loop.post('work', 1)
      loop.post('order.paid', { orderId: 'o', amount: 1 })
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ succeeded: 1, timedOut: 1 })
      expect(thrown(() => loop.on('order.updated', () => {}, { timeoutMs: 0 }))).toBeInstanceOf(InvalidArgumentError)
      expect(thrown(() => createLoop({ timeoutMs: -5 })).message).toBe(
        'Expected `options.timeoutMs` to be a positive number of ms or Infinity, got `-5` (number)',
      )
    })

    it('reports zombies: timed-out handlers still unsettled after graceMs', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 10, graceMs: 100 })
      loop.on('work', async () => {
        await clock.sleep(1000)
      })
      loop.post('work', 1)
      await clock.advance(50)
      expect(loop.metrics().gauges.zombies).toBe(0)
      await clock.advance(100)
      expect(loop.metrics().gauges.zombies).toBe(1)
      await clock.run()
      expect(loop.metrics().gauges.zombies).toBe(0)
      expect(loop.metrics().counters.lateCompletions).toBe(1)
    })

    it('shares one real timer between delayed messages and deadlines', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 1000, workers: 4 })
      loop.on('work', async () => {
        await clock.sleep(5)
      })
      for (let i = 0; i < 4; i++) loop.post('work', i)
      for (let i = 0; i < 10; i++) loop.postDelayed('work', i, 500 + i)
      await clock.advance(1)
      expect(clock.pending).toBeLessThanOrEqual(4 + 2) // 4 handler sleeps + one wheel timer (+ a turn boundary)
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ succeeded: 14, timedOut: 0 })
    })

    it('gives exactly one outcome per message whatever the race between completion and deadline', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 40 }),
          fc.array(
            fc.record({
              latency: fc.integer({ min: 0, max: 60 }),
              fails: fc.boolean(),
              key: fc.integer({ min: 0, max: 3 }),
            }),
            { maxLength: 25 },
          ),
          async (workers, timeoutMs, jobs) => {
            const clock = new VirtualClock()
            const loop = createLoop<Messages>({ clock, workers, timeoutMs, graceMs: 20 })
            const outcomes = new Map<number, string[]>()
            const note = (n: number, what: string) => outcomes.set(n, [...(outcomes.get(n) ?? []), what])
            let live = 0
            loop.events.on('succeeded', (m) => note(m.payload as number, 'succeeded'))
            loop.events.on('failed', (m) => note(m.payload as number, 'failed'))
            loop.events.on('started', () => expect(loop.running).toBeLessThanOrEqual(workers))
            loop.on('work', async (m) => {
              live++
              await clock.sleep(jobs[m.payload]?.latency ?? 0)
              live--
              if (jobs[m.payload]?.fails) throw new Error('boom')
            })
            for (const [i, job] of jobs.entries()) loop.post('work', i, { key: job.key })
            const stopped = loop.stop()
            await clock.run()
            await stopped
            expect(live).toBe(0)
            for (let i = 0; i < jobs.length; i++) expect(outcomes.get(i), `message ${i}`).toHaveLength(1)
            const c = loop.metrics().counters
            expect(c.accepted).toBe(c.succeeded + c.failed)
            // Past the deadline: timed out. Exactly at it: either side may win the race, never both (I6).
            expect(c.timedOut).toBeGreaterThanOrEqual(jobs.filter((j) => j.latency > timeoutMs).length)
            expect(c.timedOut).toBeLessThanOrEqual(jobs.filter((j) => j.latency >= timeoutMs).length)
            expect(c.lateCompletions).toBe(c.timedOut) // every timed-out handler settled later, counted once
            expect(loop.metrics().gauges.zombies).toBe(0)
          },
        ),
        { numRuns: 150 },
      )
    })
  })
})

describe('Loop', () => {
  describe('compensate', () => {
    it('runs once after a timeout, under its own deadline, and reports through `compensated`', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 20 })
      const compensated: unknown[] = []
      let runs = 0
      loop.events.on('compensated', (m, error) => compensated.push([m.payload, error]))
      loop.on(
        'work',
        async () => {
          await clock.sleep(100)
        },
        {
          compensate: async (_m, { signal }) => {
            runs++
            expect(signal.aborted).toBe(false)
            await clock.sleep(5)
          },
        },
      )
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.run()
      expect(runs).toBe(2)
      expect(compensated).toEqual([
        [1, undefined],
        [2, undefined],
      ])
    })

    it('reports a compensation that itself times out, and never touches the message outcome', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 10 })
      const errors: unknown[] = []
      loop.events.on('compensated', (_m, error) => errors.push(error))
      loop.on(
        'work',
        async () => {
          await clock.sleep(50)
        },
        { compensate: () => clock.sleep(1000) },
      )
      loop.post('work', 1)
      await clock.run()
      expect(errors).toHaveLength(1)
      expect(errors[0]).toBeInstanceOf(HandlerTimeoutError)
      expect(loop.metrics().counters).toMatchObject({ accepted: 1, failed: 1, timedOut: 1 })
    })
  })

  describe('stall', () => {
    it('reports an event loop blocked by a synchronous handler, with what was running', async () => {
      const timers = new VirtualClock()
      let t = 0
      const clock = {
        now: () => t,
        setTimeout: (fn: () => void, ms: number) => timers.setTimeout(fn, ms),
        clearTimeout: (h: unknown) => timers.clearTimeout(h),
        setImmediate: (fn: () => void) => timers.setImmediate(fn),
      }
      const loop = createLoop<Messages>({ clock, stall: { intervalMs: 100, blockedMs: 200 } })
      const reports: { kind: string; lagMs: number; running: readonly { label: string }[] }[] = []
      loop.events.on('stall', (report) => reports.push(report))
      loop.on('work', () => {
        t += 450 // spins for 450 ms without yielding
      })
      loop.post('work', 1, { key: 'k' })
      await timers.advance(0)
      await timers.advance(100)
      expect(reports).toHaveLength(1)
      expect(reports[0]?.kind).toBe('blocked')
      expect(reports[0]?.lagMs).toBeGreaterThanOrEqual(200)
      await loop.stop()
      expect(timers.pending).toBe(0) // the detector's timer is gone with the loop
    })
  })
})

describe('Loop', () => {
  describe('maxZombies', () => {
    it('holds a worker slot for each zombie, up to maxZombies, then escalates once', async () => {
      const { clock, loop } = virtualLoop({ workers: 2, timeoutMs: 10, graceMs: 10, maxZombies: 1 })
      const escalations: number[] = []
      loop.events.on('zombies', (count) => escalations.push(count))
      let fast = 0
      let fastPeakWithZombies = 0
      loop.on('work', async (m) => {
        if (m.payload < 2) return clock.sleep(1000) // 0 and 1 hang on a dependency
        fast++
        if (loop.metrics().gauges.zombies > 0) fastPeakWithZombies = Math.max(fastPeakWithZombies, fast)
        await clock.sleep(5)
        fast--
      })
      for (let i = 0; i < 8; i++) loop.post('work', i)
      await clock.advance(25) // timed out at 10, zombies at 20
      expect(loop.metrics().gauges.zombies).toBe(2)
      expect(escalations).toEqual([2]) // 2 > maxZombies = 1: one event
      await clock.run()
      // One of the two workers stays held for a zombie: the rest ran one at a time.
      expect(fastPeakWithZombies).toBe(1)
      expect(loop.metrics().counters).toMatchObject({ succeeded: 6, timedOut: 2, lateCompletions: 2 })
      expect(loop.metrics().gauges.zombies).toBe(0)
    })
  })
})

describe('Loop', () => {
  describe('timeoutBreaker', () => {
    it('refuses a type after repeated timeouts, then lets one probe decide', async () => {
      const { clock, loop } = virtualLoop({
        workers: 2,
        timeoutMs: 10,
        timeoutBreaker: { threshold: 2, cooldownMs: 100 },
      })
      const changes: string[] = []
      loop.events.on('timeout-breaker', (c) => changes.push(`${c.type} ${c.state} after ${c.timeouts}`))
      let hang = true
      loop.on('work', async () => {
        await clock.sleep(hang ? 50 : 1)
      })
      loop.on('order.paid', () => {})
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.advance(25) // two timeouts in a row
      expect(changes).toEqual(['work open after 2'])
      const error = thrown(() => loop.post('work', 3))
      expect(error).toBeInstanceOf(TimeoutBreakerOpenError)
      expect(error.message).toMatch(
        /^Cannot post `work`: its handlers kept timing out, the type's breaker is open; a probe is allowed in ~\d+ ms$/,
      )
      expect(loop.tryPost('order.paid', { orderId: 'o', amount: 1 }).status).toBe('queued') // other types flow
      await clock.advance(100)
      hang = false
      loop.post('work', 4) // the probe
      await clock.run()
      expect(changes).toEqual(['work open after 2', 'work half-open after 2', 'work closed after 0'])
      expect(loop.tryPost('work', 5).ok).toBe(true)
      await clock.run()
    })

    it('refuses bad timeoutBreaker options with typed errors', () => {
      expect(thrown(() => createLoop({ timeoutBreaker: { threshold: 0 } })).message).toBe(
        'Expected `options.timeoutBreaker.threshold` to be a positive integer, got `0` (number)',
      )
      expect(thrown(() => createLoop({ timeoutBreaker: { treshold: 2 } as never }))).toBeInstanceOf(
        InvalidArgumentError,
      )
    })
  })
})

describe('Loop', () => {
  describe('ctx.heartbeat()', () => {
    it('keeps a long handler alive while it reports progress; silence times it out early', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 1000 })
      loop.on(
        'work',
        async (m, ctx) => {
          for (let step = 0; step < 5; step++) {
            await clock.sleep(15)
            if (m.payload === 1) ctx.heartbeat() // 2 goes silent
          }
        },
        { heartbeatMs: 20 },
      )
      const failedAt: number[] = []
      loop.events.on('failed', () => failedAt.push(clock.now()))
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ succeeded: 1, timedOut: 1 })
      expect(failedAt[0]).toBeLessThan(40) // the heartbeat deadline, long before the hard 1000 ms
      expect(thrown(() => loop.on('order.paid', () => {}, { heartbeatMs: -1 })).message).toBe(
        'Expected `options.heartbeatMs` to be a positive finite number of ms, got `-1` (number)',
      )
    })
  })

  describe('on() / route() with heartbeatMs', () => {
    it('refuses a heartbeat without a finite hard deadline, naming both options, and registers nothing', () => {
      const rule =
        "Expected `options.heartbeatMs` to be given only with a finite handler deadline — `options.timeoutMs` here, or the loop's `timeoutMs` (without one no deadline is armed, so nothing would ever check the heartbeat), got `500` (number)"
      const { loop } = virtualLoop()
      const refusals = [
        thrown(() => loop.on('work', () => {}, { heartbeatMs: 500 })),
        thrown(() => loop.on('work', () => {}, { heartbeatMs: 500, timeoutMs: Number.POSITIVE_INFINITY })),
        thrown(() => loop.route('order.updated', (m) => m.payload.status, { heartbeatMs: 500 })),
      ]
      for (const error of refusals) {
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect((error as InvalidArgumentError).code).toBe('ERR_FLOWING_INVALID_ARGUMENT')
        expect((error as InvalidArgumentError).argument).toBe('options.heartbeatMs')
        expect(error.message).toBe(rule)
      }
      expect(() => loop.post('work', 1)).toThrow(UnknownMessageTypeError)
      expect(() => loop.post('order.updated', { orderId: 'o', status: 'paid' })).toThrow(UnknownMessageTypeError)
      // A finite deadline of the type's own, or the loop's, arms the check.
      loop.on('work', () => {}, { heartbeatMs: 500, timeoutMs: 5_000 })
      const { loop: bounded } = virtualLoop({ timeoutMs: 5_000 })
      bounded.on('work', () => {}, { heartbeatMs: 500 })
      expect(
        thrown(() => bounded.on('work', () => {}, { heartbeatMs: 500, timeoutMs: Infinity, replace: true })),
      ).toBeInstanceOf(InvalidArgumentError)
    })
  })

  describe('zombies()', () => {
    it('lists timed-out handlers still running past graceMs', async () => {
      const { clock, loop } = virtualLoop({ timeoutMs: 10, graceMs: 10 })
      loop.on('work', () => clock.sleep(100))
      loop.post('work', 1, { key: 'k-1' })
      await clock.advance(30)
      const zombies = loop.zombies()
      expect(zombies).toHaveLength(1)
      expect(zombies[0]?.label).toContain('work')
      expect(zombies[0]?.ageMs).toBe(30)
      await clock.run()
      expect(loop.zombies()).toEqual([])
    })
  })
})

describe('TimeoutBreakers', () => {
  describe('refuses()', () => {
    it('admits exactly one probe when half-open: the rest are refused until its outcome is recorded', async () => {
      const { clock, loop } = virtualLoop({
        workers: 4,
        timeoutMs: 10,
        timeoutBreaker: { threshold: 2, cooldownMs: 100 },
      })
      const changes: string[] = []
      loop.events.on('timeout-breaker', (c) => changes.push(c.state))
      let hangMs = 50
      loop.on('work', async () => {
        await clock.sleep(hangMs)
      })
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.advance(60) // two timeouts: open
      await clock.advance(100) // cooled down
      loop.post('work', 3) // the probe (it will time out)
      const refused = thrown(() => loop.post('work', 4))
      expect(refused).toBeInstanceOf(TimeoutBreakerOpenError)
      expect((refused as TimeoutBreakerOpenError).retryAfterMs).toBe(100)
      expect(thrown(() => loop.post('work', 5))).toBeInstanceOf(TimeoutBreakerOpenError)
      expect(changes).toEqual(['open', 'half-open'])
      await clock.advance(10) // the probe timed out: open again
      expect(changes).toEqual(['open', 'half-open', 'open'])
      expect(thrown(() => loop.post('work', 6))).toBeInstanceOf(TimeoutBreakerOpenError)
      await clock.advance(100)
      hangMs = 1
      loop.post('work', 7) // a new probe, which completes
      expect(thrown(() => loop.post('work', 8))).toBeInstanceOf(TimeoutBreakerOpenError)
      await clock.advance(1)
      expect(changes).toEqual(['open', 'half-open', 'open', 'half-open', 'closed'])
      expect(loop.tryPost('work', 9).ok).toBe(true)
      expect(loop.tryPost('work', 10).ok).toBe(true)
      await clock.run()
      expect(loop.metrics().counters.timedOut).toBe(3)
    })

    it('closes when the probe fails fast: a handler that settles is not hanging', async () => {
      const { clock, loop } = virtualLoop({
        workers: 2,
        timeoutMs: 10,
        timeoutBreaker: { threshold: 1, cooldownMs: 100 },
      })
      let mode: 'hang' | 'throw' = 'hang'
      loop.on('work', async () => {
        if (mode === 'throw') throw new NonRetryableError('bad row') // an outcome that is not a timeout
        await clock.sleep(50)
      })
      loop.post('work', 1)
      await clock.advance(160) // timed out (open), then cooled down
      mode = 'throw'
      loop.post('work', 2) // the probe: it fails at once
      await clock.advance(1)
      expect(loop.tryPost('work', 3).ok).toBe(true)
      await clock.run()
    })

    it('lets the next post probe when a probe never reports for another cooldown', async () => {
      const clock = new VirtualClock()
      const breakers = new TimeoutBreakers(1, 100, clock, () => {})
      breakers.record('work', true) // open
      await clock.advance(100)
      expect(breakers.refuses('work')).toBeUndefined() // the probe, refused further down the way in: it never runs
      expect(breakers.refuses('work')).toBeGreaterThan(0)
      await clock.advance(99)
      expect(breakers.refuses('work')).toBeGreaterThan(0)
      await clock.advance(1)
      expect(breakers.refuses('work')).toBeUndefined() // the lost probe's slot is free again
    })
  })
})

/** A VirtualClock whose `now()` can run ahead of its timers: time passed, but the event loop was too busy to fire them. */
function busyEventLoop() {
  const timers = new VirtualClock()
  let ahead = 0
  const clock = {
    now: () => timers.now() + ahead,
    setTimeout: (fn: () => void, ms: number) => timers.setTimeout(fn, ms),
    clearTimeout: (h: unknown) => timers.clearTimeout(h),
    setImmediate: (fn: () => void) => timers.setImmediate(fn),
  }
  return { clock, timers, runAhead: (ms: number) => (ahead += ms) }
}

describe('Loop', () => {
  describe('timeoutMs, when the timer fires late', () => {
    it('counts a completion after the deadline as a timeout, retried per policy', async () => {
      const { clock, timers, runAhead } = busyEventLoop()
      const loop = createLoop<Messages>({ clock, workers: 1, timeoutMs: 100, logger: false, retry: { maxAttempts: 2 } })
      const events: string[] = []
      loop.events.on('succeeded', (m) => events.push(`succeeded ${m.payload}`))
      loop.events.on('failed', (m, e) => events.push(`failed ${m.payload} ${(e as Error).name}`))
      let release: () => void = () => {}
      let attempts = 0
      loop.on('work', (_m, ctx) => {
        attempts++
        if (ctx.attempt > 1) return
        return new Promise<void>((resolve) => {
          release = resolve
        })
      })
      loop.post('work', 1)
      await timers.advance(0)
      runAhead(300) // 3× the deadline passes; the wheel's timer has not run
      release() // the handler completes before the late timer fires
      await timers.run()
      expect(events[0]).toBe('failed 1 HandlerTimeoutError')
      expect(events.at(-1)).toBe('succeeded 1') // the retry
      expect(attempts).toBe(2)
      expect(loop.metrics().counters).toMatchObject({ succeeded: 1, timedOut: 1, lateCompletions: 1 })
    })

    it('fences an effect made after the deadline, before the late timer ran', async () => {
      const { clock, timers, runAhead } = busyEventLoop()
      const loop = createLoop<Messages>({ clock, workers: 1, timeoutMs: 100, logger: false, retry: { maxAttempts: 1 } })
      const fenced: unknown[] = []
      let release: () => void = () => {}
      loop.on('order.updated', () => {})
      loop.on('order.paid', async (m, ctx) => {
        await new Promise<void>((resolve) => {
          release = resolve
        })
        try {
          ctx.post('order.updated', { orderId: m.payload.orderId, status: 'paid' })
        } catch (error) {
          fenced.push(error)
        }
      })
      loop.post('order.paid', { orderId: 'o-1', amount: 1 })
      await timers.advance(0)
      runAhead(150)
      release()
      await timers.run()
      expect(fenced).toHaveLength(1)
      expect(fenced[0]).toBeInstanceOf(FencedError)
      expect(loop.metrics().counters).toMatchObject({ accepted: 1, succeeded: 0, timedOut: 1, fenced: 1 })
    })
  })
})

describe('Loop', () => {
  describe("'stall' event of kind saturated (on by default)", () => {
    it('reports once per episode when every worker is stuck past the threshold while work waits', async () => {
      const { clock, loop } = virtualLoop({ workers: 2 })
      const reports: { kind: string; thresholdMs: number; running: readonly { label: string }[] }[] = []
      loop.events.on('stall', (report) => reports.push(report))
      const releases: (() => void)[] = []
      loop.on('work', (m) => {
        if (m.payload === 9) return
        return new Promise<void>((resolve) => releases.push(resolve)) // a call that never returns
      })
      for (let i = 0; i < 3; i++) loop.post('work', i)
      loop.post('work', 9)
      await clock.advance(29_999)
      expect(reports).toEqual([])
      await clock.advance(1)
      expect(reports.map((r) => [r.kind, r.thresholdMs, r.running.length])).toEqual([['saturated', 30_000, 2]])
      expect(reports[0]?.running.map((a) => a.label)).toEqual([
        expect.stringContaining('work'),
        expect.stringContaining('work'),
      ])
      await clock.advance(120_000)
      expect(reports).toHaveLength(1) // one report per episode, not per check
      releases[0]?.() // one worker moves on: message 2 starts, and hangs too — a new episode
      await clock.advance(30_000)
      expect(reports.map((r) => r.kind)).toEqual(['saturated', 'saturated'])
      expect(loop.queued).toBe(1)
    })

    it('counts zombies holding their workers as stuck, and arms nothing while the loop is not saturated', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, timeoutMs: 10, retry: { maxAttempts: 1 } })
      const reports: { kind: string; running: readonly { state: string }[] }[] = []
      loop.events.on('stall', (report) => reports.push(report))
      loop.on('work', () => new Promise<void>(() => {}))
      loop.post('work', 1)
      await clock.advance(100)
      expect(clock.pending).toBe(1) // the grace timer on the wheel: no stall check without waiting work
      loop.post('work', 2)
      await clock.advance(30_000)
      expect(reports.map((r) => [r.kind, r.running.map((a) => a.state)])).toEqual([['saturated', ['timed-out']]])
    })
  })
})
