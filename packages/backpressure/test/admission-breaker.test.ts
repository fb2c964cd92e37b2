import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type BreakerState,
  type BreakerTransition,
  type Decision,
  Decisions,
  WatermarkController,
} from '../src/index.js'
import { Clock, DEFAULT_MARKS, referenceLevel } from './fixtures.js'

function setup(cooldownMs = 1000, probes = 3) {
  const clock = new Clock()
  const changes: BreakerTransition[] = []
  const controller = new WatermarkController({
    now: clock.now,
    admissionBreaker: { cooldownMs, probes, onStateChange: (t) => changes.push(t) },
  })
  return { clock, changes, controller, breaker: controller.breaker as NonNullable<typeof controller.breaker> }
}

describe('AdmissionBreaker', () => {
  it('opens at reject, holds until fill < reject.exit and the cooldown, probes, then closes', () => {
    const { clock, changes, controller, breaker } = setup(1000, 3)
    expect(controller.decide(0.96, 0, 5)).toBe(Decisions.reject)
    expect(breaker.state).toBe('open')
    clock.time = 500
    expect(controller.decide(0.4, 0, 5)).toBe(Decisions.breakerOpen) // fill low, cooldown not over
    expect(controller.level).toBe('normal') // the level fell; the breaker still holds
    clock.time = 1000
    expect(controller.decide(0.86, 0, 5)).toBe(Decisions.breakerOpen) // cooldown over, fill ≥ reject.exit
    expect(controller.retryAfterMs).toBe(5000) // level shed and the fill rose since the last sample: the bound
    expect(controller.decide(0.84, 0, 5)).toBe(Decisions.admit) // probe 1
    expect(breaker.state).toBe('half-open')
    expect(controller.decide(0.9, 0, 5)).toBe(Decisions.breakerOpen) // half-open, above reject.exit: no probe
    expect(controller.decide(0.84, 9, 5)).toBe(Decisions.shed) // shed is not a probe
    expect(controller.decide(0.84, 0, 5)).toBe(Decisions.admit) // probe 2
    expect(controller.decide(0.84, 0, 5)).toBe(Decisions.admit) // probe 3
    expect(breaker.state).toBe('closed')
    expect(changes.map((t) => `${t.from}→${t.to}@${t.at}`)).toEqual([
      'closed→open@0',
      'open→half-open@1000',
      'half-open→closed@1000',
    ])
    expect(breaker.trips).toBe(1)
  })

  it('reopens and restarts the cooldown when the fill reaches reject again while half-open', () => {
    const { clock, controller, breaker } = setup(100, 5)
    controller.decide(0.99, 0, 5)
    clock.time = 100
    expect(controller.decide(0.3, 0, 5)).toBe(Decisions.admit)
    expect(breaker.state).toBe('half-open')
    clock.time = 150
    expect(controller.decide(0.95, 0, 5)).toBe(Decisions.reject)
    expect([breaker.state, breaker.openedAt, breaker.trips]).toEqual(['open', 150, 2])
    clock.time = 249
    expect(controller.decide(0.3, 0, 5)).toBe(Decisions.breakerOpen)
    expect(controller.retryAfterMs).toBe(1) // the cooldown left, refreshed by sampling and transitions
    clock.time = 250
    expect(controller.decide(0.3, 0, 5)).toBe(Decisions.admit)
  })

  it('waits for the level to leave reject (minDwellMs) before half-opening', () => {
    const clock = new Clock()
    const controller = new WatermarkController({
      now: clock.now,
      minDwellMs: 5000,
      admissionBreaker: { cooldownMs: 10 },
    })
    controller.decide(0.99, 0, 5)
    clock.time = 100
    expect(controller.decide(0.1, 0, 5)).toBe(Decisions.reject) // level still reject by dwell
    clock.time = 5000
    expect(controller.decide(0.1, 0, 5)).toBe(Decisions.admit)
    expect(controller.breaker?.state).toBe('half-open')
  })

  it('behaves like a tiny reference model under random fills, priorities and time steps', () => {
    const cooldownMs = 50
    const probes = 3
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            fill: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0.84, 0.85, 0.95, 0.3)),
            priority: fc.integer({ min: 0, max: 4 }),
            dt: fc.constantFrom(0, 1, 10, 49, 50, 200),
          }),
          { maxLength: 300 },
        ),
        (steps) => {
          const { clock, changes, controller } = setup(cooldownMs, probes)
          // The model: level by the reference function, breaker by the spec.
          let level = 0
          let state: BreakerState = 'closed'
          let openedAt = 0
          let left = 0
          let expectedChanges = 0
          for (const { fill, priority, dt } of steps) {
            clock.time += dt
            const next = referenceLevel(level, fill, DEFAULT_MARKS, true)
            if (next === 3 && level !== 3) {
              if (state !== 'open') expectedChanges++
              state = 'open'
              openedAt = clock.time
            }
            level = next
            let expected: Decision
            if (level === 3) expected = Decisions.reject
            else {
              if (state === 'open' && fill < 0.85 && clock.time - openedAt >= cooldownMs) {
                state = 'half-open'
                left = probes
                expectedChanges++
              }
              if (state === 'open' || (state === 'half-open' && fill >= 0.85)) expected = Decisions.breakerOpen
              else if (level === 2 && priority > 2) expected = Decisions.shed
              else {
                expected = Decisions.admit
                if (state === 'half-open' && --left === 0) {
                  state = 'closed'
                  expectedChanges++
                }
              }
            }
            expect(controller.decide(fill, priority, 2)).toBe(expected)
            expect(controller.breaker?.state).toBe(state)
          }
          expect(changes).toHaveLength(expectedChanges)
          for (let i = 1; i < changes.length; i++) expect(changes[i]?.from).toBe(changes[i - 1]?.to)
        },
      ),
      { numRuns: 300 },
    )
  })
})
