import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Histogram } from '../src/index.js'

function exactQuantile(sorted: number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number
}

describe('Histogram', () => {
  describe('quantile()', () => {
    it('is within 6.25 % (or 1 µs) of the exact quantile', () => {
      fc.assert(
        fc.property(
          fc.array(fc.double({ min: 0, max: 60_000, noNaN: true }), { minLength: 1, maxLength: 500 }),
          fc.constantFrom(0.5, 0.9, 0.99, 1),
          (values, q) => {
            const h = new Histogram()
            for (const v of values) h.record(v)
            const exact = exactQuantile(
              [...values].sort((a, b) => a - b),
              q,
            )
            expect(Math.abs(h.quantile(q) - exact)).toBeLessThanOrEqual(Math.max(exact * 0.0625, 0.001))
          },
        ),
      )
    })

    it('reports exact count, mean and max, and 0 when empty', () => {
      const h = new Histogram()
      expect(h.snapshot()).toEqual({ count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 })
      for (const v of [1, 2, 3, 10]) h.record(v)
      expect(h.snapshot()).toMatchObject({ count: 4, mean: 4, max: 10 })
    })
  })

  describe('merge()', () => {
    it('equals recording both sets into one histogram', () => {
      const a = new Histogram()
      const b = new Histogram()
      const both = new Histogram()
      for (let i = 0; i < 100; i++) {
        const v = (i * 7.3) % 50
        ;(i % 2 ? a : b).record(v)
        both.record(v)
      }
      a.merge(b)
      const { mean, ...rest } = a.snapshot()
      const { mean: expectedMean, ...expectedRest } = both.snapshot()
      expect(rest).toEqual(expectedRest)
      expect(mean).toBeCloseTo(expectedMean, 9)
      a.reset()
      expect(a.count).toBe(0)
    })
  })
})
