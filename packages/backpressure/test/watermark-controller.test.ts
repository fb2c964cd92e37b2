import { describe, expect, it } from 'vitest'
import {
  type BreakerTransition,
  type PressureTransition,
  SAMPLE_EVERY,
  WatermarkController,
  type WatermarkControllerOptions,
} from '../src/index.js'
import { Clock } from './fixtures.js'

function setup(options: WatermarkControllerOptions = {}) {
  const clock = new Clock()
  const events: PressureTransition[] = []
  const controller = new WatermarkController({ now: clock.now, onTransition: (t) => events.push(t), ...options })
  return { clock, events, controller }
}

const path = (events: readonly PressureTransition[]) => events.map((t) => `${t.from}→${t.to}`)

describe('WatermarkController', () => {
  describe('constructor', () => {
    it('starts at normal with the 60/80/95 % defaults and a breaker', () => {
      const { controller } = setup()
      expect(controller.level).toBe('normal')
      expect(controller.watermarks).toEqual({
        warn: { enter: 0.6, exit: 0.5 },
        shed: { enter: 0.8, exit: 0.7 },
        reject: { enter: 0.95, exit: 0.85 },
      })
      expect(controller.minDwellMs).toBe(0)
      expect(controller.breaker?.state).toBe('closed')
      expect([controller.breaker?.cooldownMs, controller.breaker?.probes]).toEqual([1000, 10])
      expect(controller.retryAfterMs).toBe(0)
    })

    it('uses performance.now when no clock is given', () => {
      const controller = new WatermarkController()
      expect(controller.update(0.97)).toBe('reject')
      expect(controller.breaker?.openedAt).toBeGreaterThan(0)
    })
  })

  describe('update()', () => {
    it('rises at fill ≥ enter and falls only at fill < exit', () => {
      const { controller, events } = setup()
      expect(controller.update(0.59)).toBe('normal')
      expect(controller.update(0.6)).toBe('warn')
      expect(controller.update(0.5)).toBe('warn') // inside the exit band
      expect(controller.update(0.4999)).toBe('normal')
      expect(path(events)).toEqual(['normal→warn', 'warn→normal'])
    })

    it('jumps several levels in one step with a single event', () => {
      const { controller, events } = setup()
      expect(controller.update(0.99)).toBe('reject')
      expect(controller.update(0.1)).toBe('normal')
      expect(path(events)).toEqual(['normal→reject', 'reject→normal'])
    })

    it('falls only through levels whose exit is above the fill', () => {
      const { controller } = setup()
      controller.update(0.96)
      expect(controller.update(0.84)).toBe('shed') // < reject.exit, ≥ shed.exit
      controller.update(0.96)
      expect(controller.update(0.65)).toBe('warn') // < shed.exit too, ≥ warn.exit
    })

    it('emits one event per crossing, not one per update', () => {
      const { controller, events } = setup()
      for (let i = 0; i < 1000; i++) controller.update(0.55 + (i % 2) * 0.1) // 0.55 / 0.65: warn's band
      expect(path(events)).toEqual(['normal→warn'])
    })

    it('waits minDwellMs before falling, but rises at once', () => {
      const { controller, clock, events } = setup({ minDwellMs: 100 })
      clock.time = 1000
      controller.update(0.85)
      clock.time = 1099
      expect(controller.update(0.1)).toBe('shed')
      expect(controller.update(0.97)).toBe('reject') // rising never waits
      clock.time = 1198
      expect(controller.update(0.1)).toBe('reject') // the dwell restarted at the rise
      clock.time = 1199
      expect(controller.update(0.1)).toBe('normal')
      expect(path(events)).toEqual(['normal→shed', 'shed→reject', 'reject→normal'])
    })

    it('reports fill, time and the decision rates of the period left', () => {
      const { controller, clock, events } = setup({ admissionBreaker: false })
      clock.time = 500
      controller.update(0.85)
      for (let i = 0; i < 30; i++) controller.decide(0.85, 1, 0) // shed
      for (let i = 0; i < 10; i++) controller.decide(0.85, 0, 0) // admitted
      clock.time = 2500
      controller.update(0.3)
      expect(events[1]).toEqual({
        from: 'shed',
        to: 'normal',
        fill: 0.3,
        at: 2500,
        rates: { admitted: 5, shed: 15, rejected: 0 },
      })
    })

    it('updates the state before calling back, so the callback sees the new level', () => {
      const seen: string[] = []
      const controller: WatermarkController = new WatermarkController({
        now: () => 0,
        onTransition: (t) => seen.push(`${t.to}=${controller.level}`),
      })
      controller.update(0.7)
      expect(seen).toEqual(['warn=warn'])
    })

    it('a throwing callback leaves the controller consistent', () => {
      const controller = new WatermarkController({
        now: () => 0,
        onTransition: () => {
          throw new Error('boom')
        },
      })
      expect(() => controller.update(0.97)).toThrow('boom')
      expect([controller.level, controller.breaker?.state, controller.stats().transitions]).toEqual([
        'reject',
        'open',
        1,
      ])
    })
  })

  describe('stats()', () => {
    it('counts time per level including the current one, transitions and decisions per level', () => {
      const { controller, clock } = setup({ admissionBreaker: false })
      clock.time = 100
      controller.decide(0.1, 0, 0) // normal, admitted
      controller.decide(0.85, 5, 1) // shed at once: shed
      clock.time = 300
      controller.decide(0.96, 0, 1) // reject
      clock.time = 350
      const stats = controller.stats()
      expect(stats.level).toBe('reject')
      expect(stats.fill).toBe(0.96)
      expect(stats.transitions).toBe(2)
      expect(stats.levels).toEqual({
        normal: { timeMs: 100, entries: 1, admitted: 1, shed: 0, rejected: 0 },
        warn: { timeMs: 0, entries: 0, admitted: 0, shed: 0, rejected: 0 },
        shed: { timeMs: 200, entries: 1, admitted: 0, shed: 1, rejected: 0 },
        reject: { timeMs: 50, entries: 1, admitted: 0, shed: 0, rejected: 1 },
      })
      expect(stats.breaker).toBeUndefined()
    })
  })

  describe('retryAfterMs', () => {
    it('is 0 below shed and the cooldown left when the breaker opens with no drain data', () => {
      const { controller, clock } = setup({ maxRetryAfterMs: 3000 })
      controller.update(0.7)
      expect(controller.retryAfterMs).toBe(0)
      clock.time = 50
      controller.update(0.97) // excess over reject.exit, no drain measured yet: the bound
      expect(controller.retryAfterMs).toBe(3000)
    })

    it('estimates (fill − exit) ÷ drain rate from sampled updates', () => {
      const { controller, clock } = setup({ admissionBreaker: false })
      controller.update(0.9) // shed, excess 0.2 over shed.exit
      // Drain 0.01 per 10 ms = 0.001 per ms; sampled every SAMPLE_EVERY updates.
      let fill = 0.9
      for (let step = 0; step < 5; step++) {
        clock.time += 10
        fill -= 0.01
        for (let i = 0; i < SAMPLE_EVERY; i++) controller.update(fill)
      }
      expect(controller.level).toBe('shed')
      // (0.85 − 0.7) ÷ 0.001 = 150 ms, give or take a floating-point ulp rounded up.
      expect(Math.abs(controller.retryAfterMs - Math.ceil((fill - 0.7) / 0.001))).toBeLessThanOrEqual(1)
    })

    it('is the bound while the queue is filling', () => {
      const { controller, clock } = setup({ admissionBreaker: false, maxRetryAfterMs: 2000 })
      controller.update(0.8)
      clock.time = 20
      for (let i = 0; i < SAMPLE_EVERY; i++) controller.update(0.9)
      expect(controller.retryAfterMs).toBe(2000)
    })
  })

  describe('breaker integration', () => {
    it('trips when the controller enters reject, after the level event', () => {
      const order: string[] = []
      const controller = new WatermarkController({
        now: () => 7,
        onTransition: (t) => order.push(`level ${t.to}`),
        admissionBreaker: {
          onStateChange: (t: BreakerTransition) => order.push(`breaker ${t.from}→${t.to} at ${t.at}`),
        },
      })
      controller.update(0.95)
      expect(order).toEqual(['level reject', 'breaker closed→open at 7'])
      expect(controller.stats().breaker).toEqual({ state: 'open', trips: 1 })
    })
  })
})
