import { describe, expect, it } from 'vitest'
import { type Decision, Decisions, PRESSURE_LEVELS, type PressureLevel, WatermarkController } from '../src/index.js'

/** A fill that puts a fresh controller at each level. */
const FILL: Record<PressureLevel, number> = { normal: 0.2, warn: 0.65, shed: 0.85, reject: 0.97 }

describe('WatermarkController', () => {
  describe('decide()', () => {
    const priorities = [-1, 0, 2, 3, 9]
    const thresholds = [0, 2, 5]
    const matrix = PRESSURE_LEVELS.flatMap((level) =>
      priorities.flatMap((priority) => thresholds.map((shedAbove) => [level, priority, shedAbove] as const)),
    )

    it.each(matrix)('at %s, priority %d, shedAbove %d', (level, priority, shedAbove) => {
      const controller = new WatermarkController({ now: () => 0, admissionBreaker: false })
      const expected: Decision =
        level === 'reject'
          ? Decisions.reject
          : level === 'shed' && priority > shedAbove
            ? Decisions.shed
            : Decisions.admit
      expect(controller.decide(FILL[level], priority, shedAbove)).toBe(expected)
      expect(controller.level).toBe(level)
    })

    it('returns frozen decisions whose fields agree', () => {
      for (const decision of Object.values(Decisions)) {
        expect(Object.isFrozen(decision)).toBe(true)
        expect(decision.admitted).toBe(decision.outcome === 'admit')
      }
      expect(Object.isFrozen(Decisions)).toBe(true)
      expect(Decisions.breakerOpen).toEqual({ outcome: 'reject', admitted: false, cause: 'breaker' })
    })

    it('allocates nothing: 1e5 calls on each path return the same object, with no transition', () => {
      // [fill that sets the path up, fill, priority, expected]; the breaker path first trips at 0.97,
      // then never cools down (the clock stands still).
      const paths: [number, number, number, Decision][] = [
        [0.97, 0.97, 0, Decisions.reject],
        [0.85, 0.85, 9, Decisions.shed],
        [0.85, 0.85, 0, Decisions.admit],
        [0.1, 0.1, 0, Decisions.admit],
        [0.97, 0.1, 0, Decisions.breakerOpen],
      ]
      for (const [setupFill, fill, priority, expected] of paths) {
        const controller = new WatermarkController({ now: () => 0 })
        controller.update(setupFill)
        const first = controller.decide(fill, priority, 1)
        const transitions = controller.stats().transitions
        let same = 0
        for (let i = 0; i < 100_000; i++) if (controller.decide(fill, priority, 1) === first) same++
        expect(first).toBe(expected)
        expect(same).toBe(100_000)
        expect(controller.stats().transitions).toBe(transitions)
      }
    })

    it('counts every decision in the level it was taken at', () => {
      const controller = new WatermarkController({ now: () => 0, admissionBreaker: false })
      for (let i = 0; i < 3; i++) controller.decide(0.85, 4, 1)
      controller.decide(0.85, 1, 1)
      controller.decide(0.99, 1, 1)
      const { shed, reject } = controller.stats().levels
      expect([shed.admitted, shed.shed, shed.rejected]).toEqual([1, 3, 0])
      expect([reject.admitted, reject.shed, reject.rejected]).toEqual([0, 0, 1])
    })
  })
})
