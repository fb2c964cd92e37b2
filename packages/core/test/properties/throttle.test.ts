/**
 * A refused route's throttle as properties: the sliding window against a reference model across
 * resizes (no start allowed that the model refuses, none refused that it allows), the window with
 * starts booked before their entries (never more than `max` entries in any window), and the throttle's
 * allowance rules (within bounds, cut at most once a second and only by a 429, grown only by a busy
 * step, gone only after 10 s calm).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SlidingWindow } from '../../src/limits/rate-limit.js'
import { THROTTLE_STEP_MS, THROTTLE_WINDOW_MS, Throttle } from '../../src/limits/throttle.js'

type Op = { readonly dt: number; readonly what: 'start' | 'resize' | 'refused' | 'waited'; readonly n: number }

const ops = fc.array(
  fc.record({
    dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1000, max: 12_000 })),
    what: fc.constantFrom('start' as const, 'start' as const, 'resize' as const, 'refused' as const, 'waited' as const),
    n: fc.integer({ min: 1, max: 8 }),
  }),
  { maxLength: 200 },
)

describe('Throttle', () => {
  it('keeps the window exact across resizes: the newest max starts decide, as in a model', () => {
    fc.assert(
      fc.property(ops, fc.integer({ min: 1, max: 2000 }), (list: Op[], perMs) => {
        const w = new SlidingWindow(3, perMs)
        let model: number[] = []
        let max = 3
        let now = 0
        for (const op of list) {
          now += op.dt
          if (op.what === 'resize') {
            w.resize(op.n)
            max = op.n
            model = model.slice(Math.max(0, model.length - max))
            continue
          }
          const recent = model.filter((t) => t + perMs > now)
          const allowed = model.length < max || (model[0] as number) + perMs <= now
          expect(w.free(now)).toBe(max - recent.length)
          expect(w.nextAt(now) === now).toBe(allowed)
          if (allowed) {
            w.record(now)
            model.push(now)
            if (model.length > max) model.shift()
          }
        }
      }),
    )
  })

  it('holds at entries: a booked start counts until it is entered, then from its entry on', () => {
    const step = fc.record({
      dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
      what: fc.constantFrom('start' as const, 'start' as const, 'enter' as const, 'resize' as const),
      pick: fc.nat(),
      n: fc.integer({ min: 1, max: 5 }),
    })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), fc.integer({ min: 1, max: 100 }), (list, perMs) => {
        const w = new SlidingWindow(3, perMs)
        let max = 3
        let epoch = 0 // resizes so far: a throttle's cut binds the starts booked after it
        const booked: number[] = [] // the epoch each booked start was booked in
        let now = 0
        const entries: { at: number; epoch: number }[] = []
        for (const op of list) {
          now += op.dt
          if (op.what === 'resize') {
            w.resize(op.n)
            max = op.n
            epoch++
          } else if (op.what === 'enter') {
            if (booked.length === 0) continue
            const [bookedIn] = booked.splice(op.pick % booked.length, 1) as [number]
            w.enter(now)
            entries.push({ at: now, epoch: bookedIn === epoch ? epoch : -1 })
          } else if (w.nextAt(now) === now) {
            expect(w.free(now)).toBeGreaterThan(0)
            w.book()
            booked.push(epoch)
          } else expect(w.free(now)).toBe(0)
          expect(w.booked).toBe(booked.length)
          // Within the last epoch, no span shorter than perMs holds more than max entries.
          const last = entries.filter((e) => e.epoch === epoch).map((e) => e.at)
          const i = last.length - 1 - max
          if (i >= 0) expect((last.at(-1) as number) - (last[i] as number)).toBeGreaterThanOrEqual(perMs)
        }
      }),
    )
  })

  it('moves the allowance only as its rules say', () => {
    fc.assert(
      fc.property(ops, (list: Op[]) => {
        const w = new SlidingWindow(1, 1000)
        const t = new Throttle(w, 0)
        let now = 0
        let cutAt = 0 // a first 429 made it
        let busy = false
        let calmSince = 0
        for (const op of list) {
          const before = t.allowance
          const stepBefore = t.nextStep
          now += op.dt
          if (op.what === 'refused') {
            t.refused(now)
            calmSince = now
            if (t.allowance < before) {
              expect(now - cutAt).toBeGreaterThanOrEqual(THROTTLE_WINDOW_MS)
              cutAt = now
            }
          } else if (op.what === 'waited') {
            t.waited()
            busy = true
            calmSince = now
          } else {
            const gone = t.step(now, 0)
            if (gone) expect(now - calmSince).toBeGreaterThanOrEqual(10_000 - THROTTLE_STEP_MS)
            if (t.allowance > before) expect(busy && now >= stepBefore).toBe(true)
            if (now >= stepBefore) busy = false
          }
          expect(t.allowance).toBeGreaterThanOrEqual(1)
          expect(t.allowance).toBeLessThanOrEqual(1_000_000)
          expect(Number.isInteger(t.allowance)).toBe(true)
        }
      }),
    )
  })
})
