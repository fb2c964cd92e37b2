import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, InvalidArgumentError, VirtualClock, type WorkersChange } from '../src/index.js'
import { thrown } from './fixtures.js'

interface Jobs {
  job: { readonly key: number; readonly n: number; readonly ms: number }
}

function invalid(fn: () => unknown, argument: string, message: RegExp): InvalidArgumentError {
  const error = thrown(fn)
  expect(error).toBeInstanceOf(InvalidArgumentError)
  expect((error as InvalidArgumentError).argument).toBe(argument)
  expect(error.message).toMatch(message)
  return error as InvalidArgumentError
}

describe('createLoop({ workers: { min, max } })', () => {
  describe('options', () => {
    const make = (workers: unknown) => () => createLoop({ clock: new VirtualClock(), workers: workers as never })

    it('refuses a bad range with an InvalidArgumentError naming the field', () => {
      invalid(make({ min: 0, max: 4 }), 'options.workers.min', /integer from 1 to 65536, got `0`/)
      invalid(make({ min: 2, max: 70_000 }), 'options.workers.max', /70000/)
      invalid(make({ min: 8, max: 4 }), 'options.workers.max', /≥ `min` \(8\)/)
      invalid(make({ min: 1.5, max: 4 }), 'options.workers.min', /1\.5/)
      invalid(make({ min: 2, max: 4, initial: 1 }), 'options.workers.initial', /\[2, 4\]/)
      invalid(make({ min: 2, max: 4, intervalMs: 0 }), 'options.workers.intervalMs', /positive finite/)
      invalid(make({ min: 2, max: 4, intervalMs: 100, cooldownMs: 50 }), 'options.workers.cooldownMs', /≥ `intervalMs`/)
      invalid(make({ min: 2, max: 4, growFactor: 1 }), 'options.workers.growFactor', /\(1, 4\]/)
      invalid(make({ min: 2, max: 4, minGain: 0 }), 'options.workers.minGain', /\(0, 1\)/)
      invalid(make({ min: 2, max: 4, utilization: 3 }), 'options.workers.utilization', /function/)
      invalid(make([2, 4]), 'options.workers', /an options object/)
      invalid(make('8'), 'options.workers', /integer from 1 to 65536, got `"8"`/)
    })

    it('refuses an unknown key with the nearest name', () => {
      const error = invalid(make({ min: 1, max: 4, cooldown: 10 }), 'options.workers.cooldown', /known options/)
      expect(error.message).toContain('did you mean `cooldownMs`?')
    })

    it('starts at min, or at initial', () => {
      const clock = new VirtualClock()
      expect(createLoop({ clock, workers: { min: 3, max: 9 } }).metrics().gauges.workers).toBe(3)
      expect(createLoop({ clock, workers: { min: 3, max: 9, initial: 5 } }).metrics().gauges.workers).toBe(5)
      expect(createLoop({ clock, workers: 7 }).metrics().gauges.workers).toBe(7)
    })
  })

  describe('loop.resize()', () => {
    it('turns the autoscaler off for good and emits a manual change', async () => {
      const clock = new VirtualClock()
      const loop = createLoop<Jobs>({
        clock,
        logger: false,
        workers: { min: 1, max: 64, intervalMs: 10, utilization: () => 0 },
      })
      const changes: WorkersChange[] = []
      loop.events.on('workers', (c) => changes.push(c))
      loop.on('job', (m) => clock.sleep(m.payload.ms))
      for (let i = 0; i < 500; i++) loop.post('job', { key: i, n: i, ms: 5 }, { key: i })
      await clock.advance(100)
      expect(changes.length).toBeGreaterThan(0)
      expect(changes.every((c) => c.reason === 'backlog')).toBe(true)
      loop.resize(2)
      const manual = changes.at(-1) as WorkersChange
      expect(manual).toMatchObject({ to: 2, reason: 'manual' })
      const count = changes.length
      await clock.advance(1000)
      expect(changes.length).toBe(count)
      expect(loop.metrics().gauges.workers).toBe(2)
      loop.resize(2)
      expect(changes.length).toBe(count) // no change, no event
      await loop.stop({ deadlineMs: 0 })
    })

    it('emits a manual change without an autoscaler too', () => {
      const loop = createLoop({ clock: new VirtualClock(), workers: 4 })
      const changes: WorkersChange[] = []
      loop.events.on('workers', (c) => changes.push(c))
      loop.resize(6)
      expect(changes).toMatchObject([{ from: 4, to: 6, reason: 'manual' }])
    })
  })

  describe('stop()', () => {
    it('lets the sampling timer go: no timer left once stopped', async () => {
      const clock = new VirtualClock()
      const loop = createLoop({ clock, workers: { min: 1, max: 4, intervalMs: 10, utilization: () => 0 } })
      await clock.advance(35)
      await loop.stop()
      await clock.advance(20)
      expect(clock.pending).toBe(0)
    })
  })

  describe('invariants while it resizes', () => {
    it('keeps per-key order (I2), never runs a key twice at once, stays within [min, max] and ends every message once', async () => {
      let resizes = 0 // across runs: the property must have exercised resizing at all
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), ms: fc.integer({ min: 0, max: 30 }) }), {
            minLength: 1,
            maxLength: 300,
          }),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 0, max: 12 }),
          async (jobs, min, span) => {
            const clock = new VirtualClock()
            const max = min + span
            const loop = createLoop<Jobs>({
              clock,
              logger: false,
              capacity: 1000,
              workers: { min, max, intervalMs: 5, cooldownMs: 10, utilization: () => 0.1, idleSamples: 1 },
            })
            const inside = new Set<number>()
            const started = new Map<number, number[]>()
            let overlap = 0
            const sizes: number[] = []
            loop.events.on('workers', (c) => {
              sizes.push(c.to)
              resizes++
            })
            loop.on('job', async ({ payload: p }) => {
              if (inside.has(p.key)) overlap++
              inside.add(p.key)
              started.set(p.key, [...(started.get(p.key) ?? []), p.n])
              await clock.sleep(p.ms)
              inside.delete(p.key)
            })
            for (const [n, j] of jobs.entries()) loop.post('job', { key: j.key, n, ms: j.ms }, { key: j.key })
            // The sampler re-arms while the loop runs: drive time in steps rather than run() to the end.
            for (let t = 0; t < 10_000 && loop.metrics().counters.succeeded < jobs.length; t++) await clock.advance(5)
            expect(overlap).toBe(0)
            for (const [key, ns] of started) {
              const posted = jobs.flatMap((j, n) => (j.key === key ? [n] : []))
              expect(ns).toEqual(posted)
            }
            expect(loop.metrics().counters.succeeded).toBe(jobs.length)
            for (const s of sizes) {
              expect(s).toBeGreaterThanOrEqual(min)
              expect(s).toBeLessThanOrEqual(max)
            }
            await loop.stop()
          },
        ),
        { numRuns: 40 },
      )
      expect(resizes).toBeGreaterThan(40)
    }, 60_000)
  })
})
