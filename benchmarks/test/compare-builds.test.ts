import * as core from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { buildRuns } from '../src/compare/cases.js'
import { medianRatio, type PairResult, reading, roundRatios } from '../src/compare/report.js'
import { CASES } from '../src/compare/specs.js'
import type { CaseSamples } from '../src/flow/rounds.js'
import { BenchError } from '../src/lib/check.js'
import { makeWorkload } from '../src/lib/workload.js'

const samples = (seconds: number[]): CaseSamples => ({
  flowCase: { id: 'x', label: 'x', run: async () => 0 },
  seconds,
})

const pair = (before: number[], after: number[]): PairResult => ({
  spec: CASES[0] as (typeof CASES)[number],
  units: 1000,
  before: samples(before),
  after: samples(after),
})

describe('compare-builds report', () => {
  describe('roundRatios()', () => {
    it('pairs each round: after ÷ before as rates, so half the seconds is 2×', () => {
      expect(roundRatios(pair([2, 4, 3], [1, 4, 6]))).toEqual([2, 1, 0.5])
    })
  })

  describe('medianRatio()', () => {
    it('divides the medians, not the rounds', () => {
      expect(medianRatio(pair([1, 2, 9], [2, 4, 1]))).toBe(2 / 2)
    })
  })

  describe('reading()', () => {
    it('is within noise when the rounds disagree on the side of 1×', () => {
      expect(reading(pair([1, 1, 1], [0.9, 1.1, 1]))).toBe('within noise')
    })
    it('is slower only when every round is slower, faster only when every round is faster', () => {
      expect(reading(pair([1, 1], [1.1, 1.01]))).toBe('slower')
      expect(reading(pair([1, 1], [0.9, 0.99]))).toBe('faster')
    })
  })
})

describe('compare-builds cases', () => {
  const n = 2000
  const runs = buildRuns(core, makeWorkload(n, 100, 'random'))

  it.each(CASES.map((c) => c.id))('%s runs its self-checks and times a positive duration', async (id) => {
    const units = Math.max(1, Math.round(n * (CASES.find((c) => c.id === id)?.share ?? 1)))
    expect(await runs[id](units)).toBeGreaterThan(0)
  })

  it('fails a run that handled another count than it posted', async () => {
    const lossy = { ...core, createLoop: dropEvery10th as typeof core.createLoop }
    const run = buildRuns(lossy, makeWorkload(n, 100, 'random'))['burst-int']
    await expect(run(n)).rejects.toThrow(BenchError)
    await expect(run(n)).rejects.toThrow(/messages handled: expected 2000, got 1800/)
  })
})

/** A createLoop whose `on` handlers skip every 10th message's body: a loop that "loses" work. */
function dropEvery10th(...args: Parameters<typeof core.createLoop>) {
  const loop = core.createLoop(...args)
  const on = loop.on.bind(loop) as (type: string, handler: (m: { payload: number }) => unknown, o?: unknown) => void
  Object.assign(loop, {
    on: (type: string, handler: (m: { payload: number }) => unknown, o?: unknown) =>
      on(type, (m) => (m.payload % 10 === 0 ? undefined : handler(m)), o),
  })
  return loop
}
