/**
 * Differential test: random operation sequences run against the wheel and against `ReferenceWheel`
 * (a plain array); every answer must match — advance results (items and order), cancel results,
 * `pending`, `size`, `nextDeadline()` — after every operation.
 */
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { type Timeout, TimingWheel } from '../../src/index.js'
import { mulberry32, ReferenceWheel } from '../fixtures.js'

type Op =
  | { readonly kind: 'schedule'; readonly delay: number }
  | { readonly kind: 'scheduleAt'; readonly offset: number }
  | { readonly kind: 'add'; readonly offset: number }
  | { readonly kind: 'cancel'; readonly pick: number }
  | { readonly kind: 'reschedule'; readonly pick: number; readonly delay: number }
  | { readonly kind: 'advance'; readonly step: number; readonly limit: number }
  | { readonly kind: 'rewind'; readonly back: number }

const MAX = Number.MAX_SAFE_INTEGER
const delay = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 100 }) },
  { weight: 4, arbitrary: fc.double({ min: 0, max: 10_000, noNaN: true }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 1e9 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: MAX }) },
  { weight: 1, arbitrary: fc.constant(MAX) },
)
const step = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 6, arbitrary: fc.double({ min: 0, max: 5, noNaN: true }) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 1000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 1e6, max: 1e12 }) },
  { weight: 1, arbitrary: fc.constant(MAX) },
)
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: delay.map((d) => ({ kind: 'schedule' as const, delay: d })) },
  {
    weight: 2,
    arbitrary: fc.integer({ min: -5000, max: 5000 }).map((o) => ({ kind: 'scheduleAt' as const, offset: o })),
  },
  {
    weight: 2,
    arbitrary: fc.double({ min: -50, max: 50, noNaN: true }).map((o) => ({ kind: 'add' as const, offset: o })),
  },
  { weight: 3, arbitrary: fc.nat().map((p) => ({ kind: 'cancel' as const, pick: p })) },
  { weight: 2, arbitrary: fc.record({ pick: fc.nat(), delay }).map((r) => ({ kind: 'reschedule' as const, ...r })) },
  {
    weight: 6,
    arbitrary: fc
      .record({ step, limit: fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 1, max: 4 })) })
      .map((r) => ({ kind: 'advance' as const, ...r })),
  },
  {
    weight: 1,
    arbitrary: fc.double({ min: 0, max: 100, noNaN: true }).map((b) => ({ kind: 'rewind' as const, back: b })),
  },
)

/** One run: a wheel, the model, a virtual clock and every handle ever issued (stale ones included). */
class Harness {
  time: number
  readonly wheel: TimingWheel<number>
  readonly model = new ReferenceWheel()
  readonly handles: { readonly key: number; readonly cancel: () => boolean; readonly pending: () => boolean }[] = []
  #keys = 0

  constructor(start: number, tickMs: number) {
    this.time = start
    this.wheel = new TimingWheel<number>({ now: () => this.time, tickMs })
  }

  apply(o: Op): void {
    const { wheel, model } = this
    switch (o.kind) {
      case 'schedule':
        this.#track(wheel.schedule(o.delay, this.#keys), this.time + o.delay)
        return
      case 'scheduleAt': {
        const at = Math.max(0, this.time + o.offset)
        this.#track(wheel.scheduleAt(at, this.#keys), at)
        return
      }
      case 'add': {
        const at = Math.max(0, this.time + o.offset)
        const key = this.#keys++
        const id = wheel.add(at, key)
        model.add(key, at)
        this.handles.push({ key, cancel: () => wheel.remove(id), pending: () => wheel.has(id) })
        return
      }
      case 'cancel':
      case 'reschedule': {
        const h = this.handles[o.pick % Math.max(1, this.handles.length)]
        if (h === undefined) return
        expect(h.pending()).toBe(model.has(h.key))
        expect(h.cancel()).toBe(model.cancel(h.key))
        if (o.kind === 'reschedule') this.#track(wheel.schedule(o.delay, this.#keys), this.time + o.delay)
        return
      }
      case 'advance':
        this.time += o.step
        this.#advance(this.time, o.limit)
        return
      case 'rewind':
        this.#advance(Math.max(0, this.time - o.back), Number.POSITIVE_INFINITY)
        return
    }
  }

  check(): void {
    expect(this.wheel.size).toBe(this.model.size)
    expect(this.wheel.nextDeadline()).toBe(this.model.nextDeadline())
  }

  #advance(now: number, limit: number): void {
    expect(this.wheel.advance(now, limit)).toEqual(this.model.advance(now, limit))
  }

  #track(t: Timeout<number>, deadline: number): void {
    const key = this.#keys++
    expect(t.item).toBe(key)
    expect(t.deadline).toBe(deadline)
    this.model.add(key, deadline)
    this.handles.push({ key, cancel: () => t.cancel(), pending: () => t.pending })
  }
}

let operations = 0
afterAll(() => {
  // The issue asks for ≥ 10^5 random operations in total.
  expect(operations).toBeGreaterThanOrEqual(100_000)
})

describe('TimingWheel against a reference model', () => {
  it('matches the reference on random operation sequences (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 0.5, 1_000_000.25, 2 ** 40 + 0.75),
        fc.constantFrom(1, 0.25, 3, 1000),
        fc.array(op, { maxLength: 600, size: 'max' }),
        (start, tickMs, ops) => {
          const h = new Harness(start, tickMs)
          for (const o of ops) {
            h.apply(o)
            h.check()
          }
          expect(h.wheel.clear()).toEqual(h.model.clear())
          operations += ops.length
        },
      ),
      { numRuns: 250 },
    )
  }, 120_000)

  it('matches the reference over a long seeded walk with a heavy load', () => {
    const random = mulberry32(0x5eed)
    for (const tickMs of [1, 0.5, 7]) {
      const h = new Harness(123.456, tickMs)
      for (let i = 0; i < 25_000; i++) {
        const r = random()
        if (r < 0.45) h.apply({ kind: 'schedule', delay: random() < 0.9 ? random() * 2000 : random() * 1e10 })
        else if (r < 0.6) h.apply({ kind: 'cancel', pick: Math.floor(random() * 1e9) })
        else if (r < 0.65) h.apply({ kind: 'scheduleAt', offset: Math.floor(random() * 200 - 100) })
        else h.apply({ kind: 'advance', step: random() < 0.99 ? random() * 10 : random() * 1e10, limit: Infinity })
        if (i % 16 === 0) h.check()
      }
      h.check()
      expect(h.wheel.clear()).toEqual(h.model.clear())
      operations += 25_000
    }
  }, 120_000)
})
