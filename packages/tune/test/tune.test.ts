import { describe, expect, it } from 'vitest'
import { parseArgs, parseDuration, resolveTuneOptions } from '../src/args.js'
import { renderAsciiChart, renderChart } from '../src/chart.js'
import { ExitCode, TuneError } from '../src/errors.js'
import { classify, explain, findKnee, type SweepPoint } from '../src/knee.js'
import { validateShape } from '../src/module.js'

const curve = (pairs: readonly [number, number, number?, number?][]): SweepPoint[] =>
  pairs.map(([workers, throughput, p99 = 10, utilization = 0.3]) => ({ workers, throughput, p99, utilization }))

const ioBound = curve([
  [1, 190],
  [2, 372],
  [4, 740],
  [8, 1454],
  [16, 2902],
  [32, 2983, 34],
])

describe('findKnee()', () => {
  it('picks the smallest count within the tolerance of the peak', () => {
    const knee = findKnee(ioBound, 0.05, 50)
    expect(knee.workers).toBe(16)
    expect(knee.peak.workers).toBe(32)
    expect(knee.threshold).toBeCloseTo(2983 * 0.95)
  })

  it('skips counts at the peak whose p99 misses the target', () => {
    const points = curve([
      [1, 100],
      [8, 990, 80],
      [16, 1000, 30],
    ])
    expect(findKnee(points, 0.05, 50).workers).toBe(16)
  })

  it('does not depend on the order of the points', () => {
    expect(findKnee([...ioBound].reverse(), 0.05, 50).workers).toBe(16)
  })

  it('gives no recommendation, and says why, when no count meets the p99 target', () => {
    const knee = findKnee(ioBound, 0.05, 1)
    expect(knee.workers).toBeUndefined()
    expect(knee.reason).toMatch(/no worker count met p99 ≤ 1\.0 ms: the best was 10\.0 ms at 1 worker,/)
  })

  it('says so when only counts far below the peak meet the target', () => {
    const points = curve([
      [1, 100, 5],
      [16, 1000, 80],
    ])
    expect(findKnee(points, 0.05, 50).reason).toMatch(/more than 5 % below the peak/)
  })

  it('rejects an empty sweep', () => {
    expect(() => findKnee([], 0.05, 50)).toThrow(RangeError)
  })
})

describe('classify()', () => {
  it('calls a curve that levels off a plateau', () => {
    expect(classify(ioBound, 0.05)).toBe('plateau')
  })

  it('calls a curve still gaining at its last count scaling', () => {
    expect(classify(ioBound.slice(0, 5), 0.05)).toBe('scales')
  })

  it('calls a flat curve on a busy thread CPU-bound, even when its tail drops', () => {
    const cpu = curve([
      [1, 4600, 1, 1],
      [4, 4900, 2, 1],
      [32, 2900, 166, 1],
    ])
    expect(classify(cpu, 0.05)).toBe('flat-cpu')
  })

  it('calls a flat curve on an idle thread serialized', () => {
    expect(
      classify(
        curve([
          [1, 500, 5, 0.1],
          [8, 510, 40, 0.1],
        ]),
        0.05,
      ),
    ).toBe('flat-serial')
  })

  it('calls a peak followed by a fall contention', () => {
    const lock = curve([
      [1, 389],
      [8, 2223],
      [32, 654],
    ])
    expect(classify(lock, 0.05)).toBe('drop')
    expect(explain('drop', lock, 0.05)).toMatch(
      /peaks at 2,223\/s with 8 workers and falls to 654\/s at 32 \(71 % lower\)/,
    )
  })
})

describe('explain()', () => {
  it('points CPU-bound handlers at worker threads, with @flowing/threads', () => {
    expect(explain('flat-cpu', curve([[1, 5000, 1, 1]]), 0.05)).toMatch(/worker-thread pool.*@flowing\/threads/)
  })

  it('in open loop, names the count from which the offered rate is served', () => {
    const open = curve([
      [8, 1513, 483],
      [16, 1993, 15],
      [32, 1994, 15],
    ])
    expect(explain('plateau', open, 0.05, 2000)).toMatch(/^Open loop: from 16 workers on, the whole offered 2,000\/s/)
  })
})

describe('parseArgs()', () => {
  it('parses every flag, sorting and de-duplicating the worker counts', () => {
    const command = parseArgs([
      'm.ts',
      '--workers=8,1,2,2',
      '--duration',
      '1.5s',
      '--rate',
      '500/s',
      '--tolerance',
      '10%',
    ])
    expect(command).toMatchObject({
      kind: 'tune',
      options: { module: 'm.ts', workers: [1, 2, 8], durationMs: 1500, warmupMs: 300, rate: 500, tolerance: 0.1 },
    })
  })

  it.each([
    [
      ['m.js', '--workers', '0'],
      /Expected `--workers` to be a comma-separated list of integers from 1 to 4096, got `0`/,
    ],
    [['m.js', '--trials', '1.5'], /Expected `--trials` to be an integer from 1 to 100, got `1.5`/],
    [['m.js', '--duration', '--quiet'], /`--duration` to be followed by a value, got `--quiet`/],
    [['m.js', '--nope'], /Unknown option `--nope`/],
    [[], /Missing the handler module/],
  ])('refuses %j with a usage error', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(message)
    try {
      parseArgs(argv)
    } catch (error) {
      expect(error).toBeInstanceOf(TuneError)
      expect((error as TuneError).exitCode).toBe(ExitCode.usage)
    }
  })

  it('reads durations in ms, s and m', () => {
    expect([parseDuration('p99', '250ms'), parseDuration('p99', '2s'), parseDuration('p99', '1m')]).toEqual([
      250, 2000, 60_000,
    ])
  })
})

describe('validateShape()', () => {
  it('names the missing function and the expected shape', () => {
    expect(() => validateShape('m.js', { default: { register() {} } })).toThrow(
      /m\.js: expected the default export's `sample` to be a function, got `undefined`/,
    )
  })

  it('refuses a module without a default export', () => {
    expect(() => validateShape('m.js', { register() {} })).toThrow(/has no default export object/)
  })
})

describe('renderChart()', () => {
  it('draws one point per count, marks the knee and draws the target line', () => {
    const svg = renderChart(ioBound, {
      title: 'p99 <io>',
      yLabel: 'ms',
      value: (p) => p.p99,
      reference: { value: 50, label: 'target 50 ms' },
      knee: 16,
    })
    expect(svg.match(/<circle /g)).toHaveLength(6)
    expect(svg).toContain('<title>p99 &lt;io&gt;</title>')
    expect(svg).toContain('stroke-dasharray')
    expect(svg.match(/>knee</g)).toHaveLength(1)
  })
})

describe('renderChart() whiskers', () => {
  it('draws a min/max whisker for each point that has a range, and fits the axis to the highest', () => {
    const svg = renderChart(ioBound, {
      title: 'throughput',
      yLabel: 'msg/s',
      value: (p) => p.throughput,
      range: (p) => (p.workers === 1 ? undefined : [p.throughput * 0.9, p.throughput * 1.5]),
    })
    expect(svg.match(/<g class="whisker"/g)).toHaveLength(5)
    // 2983 × 1.5 × 1.1 ≈ 4922: the axis goes past 4,000 (without the whisker it would stop at 3,500).
    expect(svg).toMatch(/>4k</)
    expect(renderChart(ioBound, { title: 't', yLabel: 'y', value: (p) => p.throughput })).not.toContain('whisker')
  })
})

describe('resolveTuneOptions()', () => {
  it("fills what the programmatic caller leaves out with the command line's defaults", () => {
    const cli = parseArgs(['m.js'])
    expect(cli.kind === 'tune' && cli.options).toEqual(resolveTuneOptions({ module: 'm.js' }))
    expect(resolveTuneOptions({ module: 'm.js', workers: [8, 2, 2], durationMs: 1000 })).toMatchObject({
      workers: [2, 8],
      durationMs: 1000,
      warmupMs: 200,
    })
  })

  it('refuses what the command line would refuse', () => {
    expect(() => resolveTuneOptions({ module: 'm.js', workers: [0] })).toThrow(/`--workers`/)
    expect(() => resolveTuneOptions({ module: 'm.js', trials: 0 })).toThrow(/`--trials`/)
  })
})

describe('renderAsciiChart()', () => {
  it('draws a bar per count and, under it, the min–max whisker of its trials', () => {
    const text = renderAsciiChart(
      curve([
        [1, 100],
        [4, 400],
      ]),
      {
        title: 'throughput',
        yLabel: 'msg/s',
        value: (p) => p.throughput,
        range: (p) => [p.throughput * 0.5, p.throughput],
      },
      10,
    )
    expect(text.split('\n')).toEqual([
      'throughput (msg/s; bar: median, whisker: min–max of the trials)',
      `1 │${'█'.repeat(3)}${' '.repeat(7)} 100`,
      `  │├─┤${' '.repeat(7)} 50–100`,
      `4 │${'█'.repeat(10)} 400`,
      '  │    ├────┤ 200–400',
    ])
  })

  it('draws no whisker for a single trial', () => {
    const text = renderAsciiChart(curve([[1, 100]]), {
      title: 't',
      yLabel: 'y',
      value: (p) => p.throughput,
      range: () => [100, 100],
    })
    expect(text.split('\n')).toHaveLength(2)
  })
})
