import { describe, expect, it } from 'vitest'
import { StallDetector, type StallReport, Watchdog, WatchdogArgumentError } from '../src/index.js'
import { ManualClock } from './fixtures.js'

function detector(options: { busy?: () => boolean; noProgressMs?: number } = {}) {
  const clock = new ManualClock()
  const reports: StallReport[] = []
  const watchdog = new Watchdog({ timers: clock })
  const running = [watchdog.guard({ timeoutMs: 60_000, label: { type: 'report.build', key: 'r-1' } })]
  const stall = new StallDetector({
    timers: clock,
    intervalMs: 100,
    blockedMs: 200,
    onStall: (report) => reports.push(report),
    describeRunning: () => running.map((a) => a.describe()),
    ...options,
  })
  return { clock, reports, stall }
}

describe('StallDetector', () => {
  describe('blocked event loop', () => {
    it('reports a synchronous spin as a late check with the measured lag and what was running', () => {
      const { clock, reports, stall } = detector()
      stall.start()
      clock.advance(100)
      expect(reports).toEqual([])
      clock.jump(450) // a handler spins for 450 ms: the check due at 200 runs at 550
      clock.advance(0)
      expect(reports).toHaveLength(1)
      expect(reports[0]).toMatchObject({ kind: 'blocked', lagMs: 350, thresholdMs: 200, at: 550 })
      expect(reports[0]?.running).toEqual([
        { epoch: 1, label: 'report.build (key "r-1")', state: 'running', ageMs: 550 },
      ])
      clock.jump(150) // late, but under the threshold
      clock.advance(0)
      expect(reports).toHaveLength(1)
      expect(stall.stats()).toMatchObject({ blocked: 1, maxLagMs: 350 })
      stall.stop()
    })
  })

  describe('no progress', () => {
    it('reports no progress while busy, again every noProgressMs, and never while idle', () => {
      let busy = false
      const { clock, reports, stall } = detector({ busy: () => busy, noProgressMs: 1_000 })
      stall.start()
      clock.advance(5_000)
      expect(reports).toEqual([])
      busy = true
      clock.advance(900)
      stall.progress()
      clock.advance(900)
      expect(reports).toEqual([])
      clock.advance(100)
      expect(reports.map((r) => [r.kind, r.sinceProgressMs, r.thresholdMs])).toEqual([['no-progress', 1_000, 1_000]])
      clock.advance(1_000)
      expect(reports).toHaveLength(2)
      stall.stop()
    })
  })

  describe('start() / stop()', () => {
    it('holds exactly one timer while started and none after stop()', () => {
      const { clock, stall } = detector()
      stall.start()
      stall.start()
      expect([stall.started, clock.pending]).toEqual([true, 2]) // its own + the watchdog's deadline
      clock.advance(1_000)
      stall.stop()
      expect([stall.started, clock.pending]).toEqual([false, 1])
    })
  })

  describe('constructor', () => {
    it('rejects bad configuration with typed errors', () => {
      const onStall = (): void => {}
      expect(() => new StallDetector(undefined as never)).toThrow(WatchdogArgumentError)
      expect(() => new StallDetector({ onStall: 1 as never })).toThrow(
        'Expected `options.onStall` to be a function, got `1` (number)',
      )
      expect(() => new StallDetector({ onStall, intervalMs: 0 })).toThrow(
        'Expected `options.intervalMs` to be a finite number > 0, got `0` (number)',
      )
      expect(() => new StallDetector({ onStall, blockedMs: Number.NaN })).toThrow('`options.blockedMs`')
      expect(() => new StallDetector({ onStall, busy: true as never })).toThrow('`options.busy` to be a function')
      expect(() => new StallDetector({ onStall, every: 5 } as never)).toThrow('`options.every` to be a known option')
    })
  })
})
