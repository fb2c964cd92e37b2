/**
 * Hysteresis as properties over random fill walks on virtual time: one event per level change, the
 * level always equal to the reference model's, no flapping inside an exit band, the dwell respected.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type PressureTransition, WatermarkController } from '../../src/index.js'
import { Clock, DEFAULT_MARKS, LEVELS, type Marks, referenceLevel } from '../fixtures.js'

/** Random valid marks: entries and exits strictly increasing, each exit below its entry. */
const marks: fc.Arbitrary<Marks> = fc
  .uniqueArray(fc.integer({ min: 1, max: 100 }), { minLength: 6, maxLength: 6 })
  .map((xs) => {
    const [a, b, c, d, e, f] = [...xs].sort((x, y) => x - y).map((x) => x / 100) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ]
    // exits a < c < e, entries b < d < f, and a < b, c < d, e < f.
    return [
      [b, a],
      [d, c],
      [f, e],
    ] as Marks
  })

/** A walk: steps of fill (absolute jumps or small drifts) and time. */
const walk = fc.array(
  fc.record({
    fill: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.95, 1)),
    dt: fc.constantFrom(0, 1, 5, 20, 100),
  }),
  { minLength: 1, maxLength: 400 },
)

describe('WatermarkController hysteresis', () => {
  it('matches the reference model, with exactly one event per level change', () => {
    fc.assert(
      fc.property(marks, walk, fc.constantFrom(0, 10, 50), (m, steps, minDwellMs) => {
        const clock = new Clock()
        const events: PressureTransition[] = []
        const controller = new WatermarkController({
          warn: { enter: m[0][0], exit: m[0][1] },
          shed: { enter: m[1][0], exit: m[1][1] },
          reject: { enter: m[2][0], exit: m[2][1] },
          minDwellMs,
          now: clock.now,
          onTransition: (t) => events.push(t),
        })
        let level = 0
        let enteredAt = 0
        let changes = 0
        for (const { fill, dt } of steps) {
          clock.time += dt
          const next = referenceLevel(level, fill, m, clock.time - enteredAt >= minDwellMs)
          expect(controller.update(fill)).toBe(LEVELS[next])
          if (next !== level) {
            changes++
            enteredAt = clock.time
            expect(events.at(-1)).toMatchObject({ from: LEVELS[level], to: LEVELS[next], fill, at: clock.time })
          }
          expect(events).toHaveLength(changes)
          level = next
        }
        expect(controller.stats().transitions).toBe(changes)
        // Events chain: each starts where the previous ended.
        for (let i = 1; i < events.length; i++) expect(events[i]?.from).toBe(events[i - 1]?.to)
      }),
      { numRuns: 300 },
    )
  })

  it('never changes level while the fill stays inside the current level’s exit band', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true })), (rank, us) => {
        const [enter, exit] = DEFAULT_MARKS[rank - 1] as readonly [number, number]
        // The next level up must not be reached either: stay below its entry.
        const ceiling = rank < 3 ? (DEFAULT_MARKS[rank] as readonly [number, number])[0] : 1
        const events: PressureTransition[] = []
        const controller = new WatermarkController({ now: () => 0, onTransition: (t) => events.push(t) })
        controller.update(enter)
        for (const u of us) controller.update(exit + u * (ceiling - exit) * 0.999999)
        expect(events).toHaveLength(1)
        expect(controller.level).toBe(LEVELS[rank])
      }),
    )
  })

  it('respects minDwellMs: no fall sooner than minDwellMs after entering a level', () => {
    fc.assert(
      fc.property(walk, fc.integer({ min: 1, max: 200 }), (steps, minDwellMs) => {
        const clock = new Clock()
        const events: PressureTransition[] = []
        const controller = new WatermarkController({ now: clock.now, minDwellMs, onTransition: (t) => events.push(t) })
        for (const { fill, dt } of steps) {
          clock.time += dt
          controller.update(fill)
        }
        let enteredAt = 0
        for (const t of events) {
          if (LEVELS.indexOf(t.to) < LEVELS.indexOf(t.from)) expect(t.at - enteredAt).toBeGreaterThanOrEqual(minDwellMs)
          enteredAt = t.at
        }
      }),
    )
  })
})
