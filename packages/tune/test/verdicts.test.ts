import { describe, expect, it } from 'vitest'
import { classify, noisyCounts, SPREAD_LIMIT } from '../src/knee.js'
import { formatMachineInfo, type MachineInfo } from '../src/machine.js'
import { buildReport } from '../src/report.js'
import { point, tiny } from './fixtures.js'

const machine: MachineInfo = { cpu: 'Test CPU 9000', cores: 2, loadAverage: [3.5, 2, 1], node: 'v20.20.0' }

describe('spread-aware verdicts', () => {
  it('does not call a dip inside the trials’ spread contention', () => {
    const points = [point(1, [100, 105, 110]), point(8, [700, 1000, 1300]), point(32, [760, 800, 1250])]
    expect(classify(points, 0.05)).toBe('plateau')
  })

  it('calls the same dip contention when every trial of the last count is under every trial of the peak', () => {
    const points = [point(1, [100, 105, 110]), point(8, [950, 1000, 1050]), point(32, [760, 800, 820])]
    expect(classify(points, 0.05)).toBe('drop')
  })

  it('warns when a count spreads more than 15 % and says how to get a steadier run', () => {
    const points = [point(1, [100, 101, 102]), point(8, [800, 1000, 1200])]
    expect(noisyCounts(points)).toEqual([{ workers: 8, spread: 0.4 }])
    const text = buildReport(points, tiny('m.js', { workers: [1, 8], trials: 3 })).text
    expect(text).toMatch(/Warning: the trials spread more than 15 % at 8 \(40 %\)/)
    expect(text).toMatch(/more or longer trials \(--trials 5 --duration 0\.3s\) on a quieter machine/)
  })

  it('gives no spread warning at or under the limit', () => {
    const steady = [point(1, [100, 100 + 100 * SPREAD_LIMIT]), point(8, [1000, 1010])]
    expect(noisyCounts(steady)).toEqual([])
    expect(buildReport(steady, tiny('m.js')).text).not.toMatch(/spread more than/)
  })

  it('reads the event loop first: a CPU-bound handler on a busy machine is CPU-bound, not I/O-bound', () => {
    // Noise from other work makes the curve rise and fall; the thread was busy all along.
    const points = [
      point(1, [3000, 3200], { utilization: 0.97 }),
      point(2, [4300, 4500], { utilization: 0.99 }),
      point(8, [4400, 4600], { utilization: 0.99 }),
    ]
    expect(classify(points, 0.05)).toBe('flat-cpu')
    const text = buildReport(points, tiny('m.js')).text
    expect(text).toMatch(/^CPU-bound: 3,200\/s at 1 worker \(peak 4,600\/s at 8: .* noise, not parallelism\)/m)
    expect(text).not.toMatch(/^I\/O-bound/m)
  })
})

describe('still scaling', () => {
  const scaling = [point(1, [100]), point(2, [200]), point(4, [400]), point(8, [800])]

  it('recommends nothing and suggests larger counts', () => {
    const report = buildReport(scaling, tiny('m.js', { workers: [1, 2, 4, 8] }))
    expect(report.shape).toBe('scales')
    expect(report.knee.workers).toBeUndefined()
    expect(report.text).not.toMatch(/Recommendation:/)
    expect(report.text).toMatch(/\*\*No recommendation:\*\* still scaling at 8 workers.*--workers 8,16,32/)
    expect(report.text).toMatch(/Still scaling/)
  })

  it('recommends once the curve levels off', () => {
    const report = buildReport([...scaling, point(16, [1500]), point(32, [1520])], tiny('m.js'))
    expect(report.shape).toBe('plateau')
    expect(report.text).toMatch(/\*\*Recommendation: 16 workers\*\*/)
  })
})

describe('the machine in the report', () => {
  it('names the CPU model, the cores, the load average and the Node version', () => {
    const text = buildReport([point(1, [100]), point(2, [101])], tiny('m.js'), machine).text
    expect(text).toContain(
      'Machine: Test CPU 9000 × 2 cores, load average 3.50 / 2.00 / 1.00 (above the 2 cores: other work competed for the CPU); Node v20.20.0.',
    )
  })

  it('says nothing of competition when the load is under the core count', () => {
    expect(formatMachineInfo({ ...machine, loadAverage: [0.5, 0.4, 0.3], cores: 1 })).toBe(
      'Machine: Test CPU 9000 × 1 core, load average 0.50 / 0.40 / 0.30; Node v20.20.0.',
    )
  })
})

describe('what the trial loops logged', () => {
  it('is counted in the report', () => {
    const points = [
      point(1, [100], { logged: 2, firstLogged: '[flowing] new failure of job: Error: boom (first: x)' }),
      point(2, [101], { logged: 1 }),
    ]
    expect(buildReport(points, tiny('m.js')).text).toMatch(
      /The trial loops logged 3 lines \(new failure signatures; not printed during the sweep\), the first: \[flowing\] new failure of job: Error: boom/,
    )
  })
})
