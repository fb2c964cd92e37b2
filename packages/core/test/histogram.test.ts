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

  describe('snapshot() edges', () => {
    // Bucket midpoints in µs: below 16 µs one bucket a microsecond (midpoint = its start); from 16 µs,
    // 16 buckets per power of two, 2^(e-4) µs wide, reported at their middle (capped at the max).
    function snapshotOf(...values: number[]) {
      const h = new Histogram()
      for (const v of values) h.record(v)
      return h.snapshot()
    }

    it('is all zeros when empty, and again after a reset', () => {
      const h = new Histogram()
      expect(h.snapshot()).toEqual({ count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 })
      h.record(5)
      expect(h.snapshot().p50).toBeGreaterThan(0)
      h.reset()
      expect(h.snapshot()).toEqual({ count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 })
      h.record(0.002)
      expect(h.snapshot()).toEqual({ count: 1, mean: 0.002, p50: 0.002, p90: 0.002, p99: 0.002, max: 0.002 })
    })

    it('reports one value as its bucket midpoint capped at the value', () => {
      expect(snapshotOf(0.25)).toEqual({ count: 1, mean: 0.25, p50: 0.25, p90: 0.25, p99: 0.25, max: 0.25 })
      expect(snapshotOf(0)).toEqual({ count: 1, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 })
      expect(snapshotOf(-3)).toEqual({ count: 1, mean: -3, p50: 0, p90: 0, p99: 0, max: 0 }) // counts as 0
    })

    it('puts values at bucket boundaries in the bucket they start', () => {
      // p50 of two values is the lower one's bucket; the larger value (1 s) keeps the cap away.
      const p50 = (us: number) => snapshotOf(us / 1000, 1000).p50 * 1000
      expect(p50(15)).toBeCloseTo(15, 9) // the last one-microsecond bucket
      expect(p50(15.9)).toBeCloseTo(15, 9)
      expect(p50(16)).toBeCloseTo(16.5, 9) // the first log bucket, [16, 17)
      expect(p50(31)).toBeCloseTo(31.5, 9) // [31, 32)
      expect(p50(32)).toBeCloseTo(33, 9) // [32, 34): the next octave, twice as wide
      expect(p50(1000)).toBeCloseTo(1008, 9) // [992, 1024)
      expect(p50(1023)).toBeCloseTo(1008, 9)
      expect(p50(1024)).toBeCloseTo(1056, 9) // [1024, 1088)
    })

    it('clamps values past ~35.8 minutes into the top bucket, keeping the exact max', () => {
      const top = (31 * 2 ** 26 + 2 ** 25) / 1000 // the top bucket's midpoint, ms: [31·2^26, 2^31) µs
      expect(snapshotOf(1, 1e9)).toEqual({ count: 2, mean: (1 + 1e9) / 2, p50: 1.008, p90: top, p99: top, max: 1e9 })
      expect(snapshotOf(1, Number.POSITIVE_INFINITY).p99).toBe(top)
      expect(snapshotOf(2 ** 31 / 1000, 2 ** 40).p50).toBe(top)
    })

    it('counts NaN in no bucket: the mean is NaN, quantiles past the bucketed values report the max', () => {
      expect(snapshotOf(Number.NaN)).toEqual({ count: 1, mean: Number.NaN, p50: 0, p90: 0, p99: 0, max: 0 })
      expect(snapshotOf(0.5, Number.NaN)).toEqual({
        count: 2,
        mean: Number.NaN,
        p50: 0.5,
        p90: 0.5,
        p99: 0.5,
        max: 0.5,
      })
    })

    it('returns a new object each call, which later recordings leave as it was', () => {
      const h = new Histogram()
      h.record(1)
      const first = h.snapshot()
      expect(h.snapshot()).not.toBe(first)
      h.record(100)
      expect(first).toEqual({ count: 1, mean: 1, p50: 1, p90: 1, p99: 1, max: 1 })
      expect(h.snapshot()).toMatchObject({ count: 2, max: 100 })
    })
  })

  describe('combinedSnapshot()', () => {
    it('is all zeros for no parts or empty parts, and skips empty parts', () => {
      const zero = { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 }
      expect(Histogram.combinedSnapshot([])).toEqual(zero)
      expect(Histogram.combinedSnapshot([new Histogram(), new Histogram()])).toEqual(zero)
      const a = new Histogram()
      a.record(2)
      expect(Histogram.combinedSnapshot([new Histogram(), a, new Histogram()])).toEqual(a.snapshot())
    })

    it('does not see buckets a previous, larger combination left behind', () => {
      const small = new Histogram()
      const large = new Histogram()
      small.record(0.001)
      for (let i = 0; i < 10; i++) large.record(500)
      Histogram.combinedSnapshot([small, large])
      expect(Histogram.combinedSnapshot([small])).toEqual(small.snapshot())
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
