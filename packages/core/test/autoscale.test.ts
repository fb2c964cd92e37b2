import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ResolvedAutoscale } from '../src/contracts/pool.js'
import { VirtualClock, type WorkersChange } from '../src/index.js'
import { checkWorkers } from '../src/pool/autoscale-options.js'
import { Autoscaler } from '../src/pool/autoscaler.js'

/** A synthetic workload: throughput as a function of the worker count, integrated over virtual time. */
interface Model {
  readonly throughput: (workers: number) => number // completed attempts per second
  readonly backlog: (now: number) => number
  readonly busy: (workers: number, now: number) => number
  readonly utilization: () => number
}

function simulate(model: Model, range: Partial<ResolvedAutoscale> & { min: number; max: number }) {
  const clock = new VirtualClock()
  const options = checkWorkers('workers', { utilization: model.utilization, ...range }) as ResolvedAutoscale
  let size = options.initial
  let completed = 0
  let at = 0
  const integrate = (): void => {
    completed += (model.throughput(size) * (clock.now() - at)) / 1000
    at = clock.now()
  }
  const changes: WorkersChange[] = []
  const sizes: number[] = []
  const scaler = new Autoscaler(options, clock, {
    backlog: () => model.backlog(clock.now()),
    running: () => model.busy(size, clock.now()),
    size: () => size,
    completed: () => {
      integrate()
      return completed
    },
    active: () => true,
    resize: (n) => {
      integrate()
      size = n
      sizes.push(n)
    },
    changed: (c) => changes.push(c),
  })
  scaler.start()
  return { clock, scaler, changes, sizes, size: () => size, options }
}

// Throughput n × rate up to the knee, then flat (or declining by `decline` per worker past it).
function ioModel(knee: number, decline = 0, utilization = 0.2): Model {
  return {
    throughput: (n) => 100 * (n <= knee ? n : Math.max(knee * 0.2, knee - decline * (n - knee))),
    backlog: () => 1000,
    busy: (n) => n,
    utilization: () => utilization,
  }
}

describe('Autoscaler', () => {
  describe('convergence', () => {
    it.each([
      [16, 0],
      [16, 0.3],
      [40, 0],
      [5, 0.5],
    ])(
      'settles an I/O load with its knee at %i (decline %d per worker) within 10 percent of the knee',
      async (knee, decline) => {
        const run = simulate(ioModel(knee, decline), { min: 1, max: 128, intervalMs: 100, cooldownMs: 300 })
        await run.clock.advance(60_000)
        expect(run.size() / knee).toBeGreaterThanOrEqual(0.9)
        expect(run.size() / knee).toBeLessThanOrEqual(1.1 + 1 / knee)
        const last = run.changes.at(-1) as WorkersChange
        expect(last.at).toBeLessThan(60_000) // it settled: no change in the last stretch
      },
    )

    it('never grows a CPU-bound load (utilization 1) past min', async () => {
      const run = simulate({ ...ioModel(1), utilization: () => 1 }, { min: 2, max: 64, intervalMs: 100 })
      await run.clock.advance(30_000)
      expect(run.size()).toBe(2)
      expect(run.changes).toEqual([])
    })

    it('walks a CPU-bound load started high down to min (more workers bring nothing)', async () => {
      const run = simulate({ ...ioModel(1), utilization: () => 1 }, { min: 1, max: 64, initial: 32, intervalMs: 100 })
      await run.clock.advance(60_000)
      expect(run.size()).toBeLessThanOrEqual(2)
      expect(run.changes.every((c) => c.reason === 'probe' || c.reason === 'loss')).toBe(true)
    })

    it('shrinks an idle loop to min after idleSamples samples', async () => {
      const idle: Model = { throughput: () => 0, backlog: () => 0, busy: () => 0, utilization: () => 0.01 }
      const run = simulate(idle, { min: 2, max: 64, initial: 40, intervalMs: 100, idleSamples: 3 })
      await run.clock.advance(250)
      expect(run.size()).toBe(40) // two samples: not yet
      await run.clock.advance(100)
      expect(run.size()).toBe(2)
      expect(run.changes).toMatchObject([{ from: 40, to: 2, reason: 'idle', backlog: 0 }])
    })

    it('keeps a grow whose gain the load, not the pool, limited (backlog drained)', async () => {
      let drained = false
      const model: Model = {
        throughput: () => 100,
        backlog: () => (drained ? 0 : 50),
        busy: (n) => (drained ? Math.ceil(n * 0.6) : n),
        utilization: () => 0.1,
      }
      const run = simulate(model, { min: 4, max: 64, intervalMs: 100, cooldownMs: 300 })
      await run.clock.advance(300)
      expect(run.size()).toBe(6)
      drained = true
      await run.clock.advance(300)
      expect(run.size()).toBe(6)
    })
  })

  describe('stop()', () => {
    it('clears its timer: no sample after stop', async () => {
      const run = simulate(ioModel(64), { min: 1, max: 64, intervalMs: 100, cooldownMs: 100 })
      await run.clock.advance(250)
      const size = run.size()
      run.scaler.stop()
      expect(run.clock.pending).toBe(0)
      await run.clock.advance(10_000)
      expect(run.size()).toBe(size)
      expect(run.scaler.enabled).toBe(false)
    })
  })

  describe('properties', () => {
    const loadArb = fc.record({
      knee: fc.integer({ min: 1, max: 100 }),
      decline: fc.double({ min: 0, max: 2, noNaN: true }),
      backlogs: fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 40 }),
      busyShare: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }),
      utilizations: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }),
    })
    const rangeArb = fc
      .record({
        min: fc.integer({ min: 1, max: 20 }),
        span: fc.integer({ min: 0, max: 100 }),
        intervalMs: fc.integer({ min: 10, max: 500 }),
        cooldownFactor: fc.integer({ min: 1, max: 5 }),
      })
      .map((r) => ({
        min: r.min,
        max: r.min + r.span,
        intervalMs: r.intervalMs,
        cooldownMs: r.intervalMs * r.cooldownFactor,
      }))

    it('stays within [min, max], changes at most once per cooldown, one event per change with from ≠ to', async () => {
      await fc.assert(
        fc.asyncProperty(loadArb, rangeArb, async (load, range) => {
          let i = 0
          const pick = <T>(xs: readonly T[]): T => xs[i % xs.length] as T
          const model: Model = {
            throughput: ioModel(load.knee, load.decline).throughput,
            backlog: () => pick(load.backlogs),
            busy: (n) => Math.round(n * pick(load.busyShare)),
            utilization: () => pick(load.utilizations),
          }
          const run = simulate(model, range)
          for (let t = 0; t < 200; t++) {
            i++
            await run.clock.advance(range.intervalMs)
            expect(run.size()).toBeGreaterThanOrEqual(range.min)
            expect(run.size()).toBeLessThanOrEqual(range.max)
          }
          expect(run.changes.length).toBe(run.sizes.length)
          let previous = run.options.initial
          let lastAt = Number.NEGATIVE_INFINITY
          for (const [k, c] of run.changes.entries()) {
            expect(c.from).not.toBe(c.to)
            expect(c.from).toBe(previous)
            expect(c.to).toBe(run.sizes[k])
            expect(c.at - lastAt).toBeGreaterThanOrEqual(range.cooldownMs)
            previous = c.to
            lastAt = c.at
          }
        }),
        { numRuns: 60 },
      )
    }, 60_000)
  })
})
