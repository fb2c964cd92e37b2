/**
 * Differential: `guard({ queued: true })` (a FIFO per timeout value) against the wheel path (one entry
 * per attempt), both on a manual clock, under random interleavings of guard / done / fail / cancel /
 * heartbeat / fence / signal reads / lent readings / time passing with timers firing / time jumping
 * without them (late timers). Same outcomes, states, times, counters; never early; entries held stay
 * within `1.5 × running + 32` per FIFO. Not compared: the order in which attempts due in the same
 * wake-up time out (the FIFO's next head is re-armed after the batch).
 */
import { WheelDriver } from '@flowing/timing-wheel'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Attempt, FencedError, Watchdog, type WatchdogOptions } from '../../src/index.js'
import { DeadlineQueue } from '../../src/internal/deadline-queue.js'
import { ManualClock } from '../fixtures.js'

type Op =
  | { kind: 'guard'; timeoutMs: number; heartbeatMs: number | undefined; lag: number }
  | { kind: 'done' | 'fail' | 'cancel' | 'heartbeat' | 'read-signal' | 'effect'; target: number; lend: boolean }
  | { kind: 'advance' | 'jump'; ms: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('guard' as const),
      // Mostly a few values (long FIFOs); up to 12 (past the 8 FIFOs: the rest fall back to the wheel).
      timeoutMs: fc.oneof(fc.constantFrom(10, 20, 40), fc.integer({ min: 1, max: 12 })),
      heartbeatMs: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined, freq: 6 }),
      // A lent reading up to 3 ms old: a deadline before the FIFO's last one goes on the wheel.
      lag: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constantFrom('done', 'fail', 'cancel', 'heartbeat', 'read-signal', 'effect' as const),
      target: fc.nat(),
      lend: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('advance', 'jump' as const), ms: fc.nat({ max: 25 }) }) },
)

interface Timing {
  timedOutAt: number
  zombieAt: number
  kind: string
}

/** A watchdog on a shared driver (routed as a loop does) whose scheduler records the FIFOs it is given. */
function recordingWatchdog(clock: ManualClock, queues: Set<DeadlineQueue<Attempt>>, options: WatchdogOptions) {
  let watchdog: Watchdog | undefined
  const driver = new WheelDriver<Attempt>({
    timers: clock,
    onDue: (items) => {
      for (const item of items) if (Watchdog.owns(item)) watchdog?.onDue(item)
    },
  })
  const scheduler = {
    add: (deadline: number, item: Attempt): number => {
      if (item instanceof DeadlineQueue) queues.add(item as DeadlineQueue<Attempt>)
      return driver.add(deadline, item)
    },
    remove: (id: number) => driver.remove(id),
    has: (id: number) => driver.has(id),
  }
  watchdog = new Watchdog({ ...options, scheduler })
  return { watchdog, driver }
}

/** One side: a watchdog on a manual clock, shared (a driver routed as a loop does) or standalone. */
function side(queued: boolean, shared: boolean, graceMs: number) {
  const clock = new ManualClock()
  const records = new Map<number, Timing>()
  const queues = new Set<DeadlineQueue<Attempt>>()
  let early = 0
  const onTimeout = (attempt: Attempt, error: { kind: string }): void => {
    const due = error.kind === 'deadline' ? attempt.deadline : (attempt.heartbeatDeadline ?? 0)
    if (clock.time < due) early++
    records.set(attempt.epoch, { timedOutAt: clock.time, zombieAt: -1, kind: error.kind })
  }
  const onZombie = (z: { epoch: number }): void => {
    const r = records.get(z.epoch)
    if (r !== undefined) r.zombieAt = clock.time
  }
  const options = { timers: clock, graceMs, onTimeout, onZombie }
  const watchdog = shared ? recordingWatchdog(clock, queues, options).watchdog : new Watchdog(options)
  const attempts: Attempt[] = []
  const results: unknown[] = []
  const w = watchdog
  return {
    clock,
    watchdog: w,
    attempts,
    results,
    queues,
    records,
    early: () => early,
    apply(o: Op): void {
      if ('ms' in o) {
        if (o.kind === 'advance') clock.advance(o.ms)
        else clock.jump(o.ms)
      } else if (o.kind === 'guard') {
        const now = Math.max(0, clock.time - o.lag)
        const hb = o.heartbeatMs === undefined ? {} : { heartbeatMs: o.heartbeatMs }
        attempts.push(w.guard({ timeoutMs: o.timeoutMs, ...hb, now, queued }))
      } else {
        const a = attempts[o.target % Math.max(1, attempts.length)]
        if (a !== undefined) results.push(touch(a, o.kind, o.lend ? clock.time : undefined))
      }
    },
  }
}

function touch(a: Attempt, kind: string, now: number | undefined): unknown {
  if (kind === 'done') return a.done(now)
  if (kind === 'fail') return a.fail(now)
  if (kind === 'cancel') return a.cancel()
  if (kind === 'heartbeat') return a.heartbeat()
  if (kind === 'read-signal') return a.signal.aborted
  try {
    a.fence('ctx.post')
    return 'passed'
  } catch (error) {
    return error instanceof FencedError ? 'fenced' : error
  }
}

function view(s: ReturnType<typeof side>) {
  return {
    stats: s.watchdog.stats(),
    // As a set: attempts due in one wake-up may time out in another order (see the README), at the same time.
    zombies: s.watchdog
      .zombies()
      .map((z) => z.epoch)
      .sort((x, y) => x - y),
    attempts: s.attempts.map((a) => [a.epoch, a.state, a.settledLate, a.isZombie, a.isCurrent]),
    records: [...s.records.entries()].sort((x, y) => x[0] - y[0]),
    results: s.results,
  }
}

describe('queued guards (differential against the wheel path)', () => {
  it('give the same outcomes, states, times and counters, never early, holding O(running) entries', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 150, size: 'max' }),
        fc.constantFrom(0, 5, 30, Number.POSITIVE_INFINITY),
        fc.boolean(),
        (ops, graceMs, shared) => {
          const wheel = side(false, shared, graceMs)
          const fifo = side(true, shared, graceMs)
          for (const o of ops) {
            wheel.apply(o)
            fifo.apply(o)
            for (const q of fifo.queues) expect(q.held).toBeLessThanOrEqual(1.5 * q.live + 32)
            const live = [...fifo.queues].reduce((sum, q) => sum + q.live, 0)
            expect(live).toBeLessThanOrEqual(fifo.watchdog.running)
            // Standalone, a real timer is armed exactly when the wheel path has one: none when idle.
            if (!shared) expect(fifo.clock.pending).toBe(wheel.clock.pending)
          }
          expect(view(fifo)).toEqual(view(wheel))
          expect([wheel.early(), fifo.early()]).toEqual([0, 0])
          // Everything ends: run the clock out; both agree again, and nothing stays armed standalone.
          wheel.clock.advance(200)
          fifo.clock.advance(200)
          expect(view(fifo)).toEqual(view(wheel))
          expect(fifo.watchdog.running).toBe(0)
          if (!shared) expect(fifo.clock.pending).toBe(wheel.clock.pending)
        },
      ),
      { numRuns: 400 },
    )
  }, 60_000) // 400 runs: seconds on a busy 2-core machine

  it('a long-running head does not let settled attempts pile up behind it', () => {
    const clock = new ManualClock()
    const queues = new Set<DeadlineQueue<Attempt>>()
    const { watchdog, driver } = recordingWatchdog(clock, queues, { timers: clock })
    const head = watchdog.guard({ timeoutMs: 30_000, queued: true })
    let most = 0
    for (let i = 0; i < 100_000; i++) {
      watchdog.guard({ timeoutMs: 30_000, queued: true }).done()
      for (const q of queues) most = Math.max(most, q.held)
    }
    expect([most <= 1.5 + 32, head.isCurrent, driver.size]).toEqual([true, true, 1])
    clock.advance(30_000)
    expect([head.state, watchdog.stats().timedOut, watchdog.stats().completed]).toEqual(['timed-out', 1, 100_000])
  })
})
