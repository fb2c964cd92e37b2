/**
 * `Histogram` and `LoopMetrics` snapshots against a naive reference: the raw values kept in a list,
 * each quantile found by sorting them (16 sub-buckets per power of two, written here from the layout's
 * definition, not from the code), for random records — negative, 0, NaN, ±Infinity, huge, bucket
 * boundaries — interleaved with snapshots, merges and resets. A snapshot taken earlier never changes.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Histogram, type HistogramSnapshot } from '../../src/index.js'
import { LoopMetrics } from '../../src/metrics/loop-metrics.js'

/** The largest whole microsecond the histogram tells apart (~35.8 minutes). */
const TOP_US = 2 ** 31 - 1

/** The midpoint (µs) of the bucket a value (ms) falls in, from the layout's definition. */
function referenceMidpoint(ms: number): number {
  const us = Math.min(Math.max(ms * 1000, 0), TOP_US)
  const whole = Math.floor(us)
  if (whole < 16) return whole // one bucket a microsecond below 16 µs
  let octave = 16 // 2^e ≤ whole < 2^(e+1): 16 buckets of 2^(e-4) µs each
  while (octave * 2 <= whole) octave *= 2
  const width = octave / 16
  return Math.floor(whole / width) * width + width / 2
}

/** What a histogram holds, kept naively: every value, their sum in record order, the max. */
class Reference {
  values: number[] = []
  sum = 0
  max = 0

  record(ms: number): void {
    this.values.push(ms)
    this.sum += ms
    if (ms > this.max) this.max = ms
  }

  /** What `Histogram.merge` does: the values appended, the sums added, the larger max kept. */
  merge(other: Reference): void {
    this.values.push(...other.values)
    this.sum += other.sum
    if (other.max > this.max) this.max = other.max
  }

  quantile(q: number): number {
    if (this.values.length === 0) return 0
    const rank = Math.max(1, Math.ceil(q * this.values.length))
    const bucketed = this.values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b) // NaN: in no bucket
    const at = bucketed[rank - 1]
    return at === undefined ? this.max : Math.min(referenceMidpoint(at) / 1000, this.max)
  }

  snapshot(): HistogramSnapshot {
    const count = this.values.length
    return { count, mean: count === 0 ? 0 : this.sum / count, ...this.quantiles(), max: this.max }
  }

  quantiles() {
    return { p50: this.quantile(0.5), p90: this.quantile(0.9), p99: this.quantile(0.99) }
  }
}

/** The reference of several histograms together, summed in order as a merge into a new one does. */
function referenceOfAll(parts: readonly Reference[]): HistogramSnapshot {
  const all = new Reference()
  for (const p of parts) all.merge(p)
  return all.snapshot()
}

const valueArb = fc.oneof(
  fc.double({ min: 0, max: 100, noNaN: true }), // typical latencies
  fc.double(), // anything: NaN, ±Infinity, -0, ±1e308, subnormals
  fc.integer({ min: 0, max: 2 ** 32 }).map((us) => us / 1000), // whole microseconds: bucket edges
  fc.integer({ min: 4, max: 31 }).map((e) => 2 ** e / 1000), // octave starts
  fc.constantFrom(0, -0, -1, TOP_US / 1000, (TOP_US + 1) / 1000, 1e9, Number.NaN, Number.POSITIVE_INFINITY),
)

type Op =
  | { kind: 'record'; priority: number; ms: number }
  | { kind: 'snapshot' }
  | { kind: 'merge'; values: number[] }
  | { kind: 'reset' }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('record' as const), priority: fc.nat(9), ms: valueArb }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'snapshot' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('merge' as const), values: fc.array(valueArb) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
)

const QS = [0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1]

describe('Histogram', () => {
  describe('snapshot()', () => {
    it('equals a naive full-scan reference, and an earlier snapshot never changes', () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 300 }), (ops) => {
          const h = new Histogram()
          const ref = new Reference()
          const taken: [HistogramSnapshot, HistogramSnapshot][] = []
          for (const op of ops) {
            if (op.kind === 'record') {
              h.record(op.ms)
              ref.record(op.ms)
            } else if (op.kind === 'merge') {
              const other = new Histogram()
              const otherRef = new Reference()
              for (const v of op.values) {
                other.record(v)
                otherRef.record(v)
              }
              h.merge(other)
              ref.merge(otherRef)
            } else if (op.kind === 'reset') {
              h.reset()
              Object.assign(ref, new Reference())
            } else {
              const s = h.snapshot()
              expect(s).toEqual(ref.snapshot())
              for (const q of QS) expect(h.quantile(q)).toBe(ref.quantile(q))
              taken.push([s, structuredClone(s)])
            }
          }
          expect(h.snapshot()).toEqual(ref.snapshot())
          for (const [s, copy] of taken) expect(s).toEqual(copy)
        }),
        { numRuns: 300 },
      )
    })
  })

  describe('combinedSnapshot()', () => {
    it('equals the reference of all parts, as merging them into a new histogram did', () => {
      fc.assert(
        fc.property(fc.array(fc.array(valueArb, { maxLength: 60 }), { maxLength: 10 }), (parts) => {
          const hs = parts.map((values) => {
            const h = new Histogram()
            for (const v of values) h.record(v)
            return h
          })
          const refs = parts.map((values) => {
            const r = new Reference()
            for (const v of values) r.record(v)
            return r
          })
          const merged = new Histogram()
          for (const h of hs) merged.merge(h)
          expect(Histogram.combinedSnapshot(hs)).toEqual(referenceOfAll(refs))
          expect(Histogram.combinedSnapshot(hs)).toEqual(merged.snapshot())
        }),
        { numRuns: 300 },
      )
    })
  })
})

describe('LoopMetrics', () => {
  describe('snapshot()', () => {
    it('reports every histogram as the reference does, and an earlier snapshot never changes', () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 300 }), (ops) => {
          const m = new LoopMetrics()
          const waits = Array.from({ length: 10 }, () => new Reference())
          const handler = new Reference()
          const taken: [object, object][] = []
          const gauges = {} as Parameters<LoopMetrics['snapshot']>[0]
          for (const op of ops) {
            if (op.kind === 'record') {
              m.recordWait(op.priority, op.ms)
              ;(waits[op.priority] as Reference).record(op.ms)
              m.recordHandler(-op.ms)
              handler.record(-op.ms)
            } else if (op.kind === 'snapshot') {
              const s = m.snapshot(gauges, undefined, undefined)
              expect(s.queueWaitByPriority).toEqual(waits.map((r) => r.snapshot()))
              expect(s.queueWait).toEqual(referenceOfAll(waits))
              expect(s.handlerTime).toEqual(handler.snapshot())
              taken.push([s, structuredClone(s)])
            }
          }
          for (const [s, copy] of taken) expect(s).toEqual(copy)
        }),
        { numRuns: 200 },
      )
    })
  })
})
