/**
 * Firing: the wheel's `advance()` on a virtual clock (pure cost per fired timer), and both the wheel
 * (through `WheelDriver`) and `setTimeout` on the real clock — CPU per fired timer and the lateness
 * of every timer against `performance.now()`.
 *
 * @module
 */
import { TimingWheel, WheelDriver } from '@flowing/timing-wheel'
import { BenchError, expectEqual, withDeadline } from './check.js'
import { collect } from './gc.js'
import type { TimerWorkload } from './wheel-ops.js'

/** How `advance()` is called: every 1 ms across the spread, or once after it (a catch-up). */
export type AdvanceMode = 'steps' | 'catch-up'

/**
 * ns per fired timer: `n` timers due at their workload delay (ms from 0), fired by `advance()` on a
 * virtual clock. Checks every timer fired once, none early, in deadline order.
 */
export function virtualFire(w: TimerWorkload, mode: AdvanceMode): number {
  let time = 0
  const wheel = new TimingWheel<number>({ now: () => time, maxPending: w.n })
  const { delays, n } = w
  let end = 0
  for (let i = 0; i < n; i++) {
    wheel.add(delays[i] as number, i)
    end = Math.max(end, delays[i] as number)
  }
  collect()
  // Timed: advance() alone; the batches are checked afterwards, so the check's own cache misses
  // (a deadline lookup per item) are not charged to the wheel.
  const batches: number[][] = []
  const times: number[] = []
  const t0 = performance.now()
  for (time = mode === 'steps' ? 1 : end; time <= end; time++) {
    const due = wheel.advance(time)
    if (due.length > 0) {
      batches.push(due)
      times.push(time)
    }
  }
  const ms = performance.now() - t0
  let fired = 0
  let early = 0
  let disorder = 0
  let last = 0
  batches.forEach((due, b) => {
    for (const item of due) {
      const deadline = delays[item] as number
      if (deadline > (times[b] as number)) early++
      if (deadline < last) disorder++
      last = deadline
    }
    fired += due.length
  })
  expectEqual(`virtual fire (${mode}) ${w.label}: timers fired`, fired, n)
  expectEqual(`virtual fire (${mode}) ${w.label}: timers fired before their deadline`, early, 0)
  expectEqual(`virtual fire (${mode}) ${w.label}: timers out of deadline order`, disorder, 0)
  return (ms * 1e6) / n
}

/** One real-clock run: CPU per fired timer and every timer's lateness (ms; negative = early). */
export interface RealClockRun {
  readonly cpuNsPerTimer: number
  readonly lateness: Float64Array
}

/** Which timers run on the real clock. */
export type RealSubject = 'wheel' | 'setTimeout'

/**
 * Schedules `w.n` timers (delays from the workload) on the real clock and waits until all fired.
 * Each delivery reads `performance.now()` once and records the lateness. CPU is counted from the end
 * of scheduling to the last delivery (idle waiting costs none).
 *
 * @throws BenchError if a timer fires twice or never, or — for the wheel — before its deadline
 */
export async function realClockRun(subject: RealSubject, w: TimerWorkload, deadlineMs: number): Promise<RealClockRun> {
  const { n, delays } = w
  const deadlines = new Float64Array(n)
  const lateness = new Float64Array(n)
  const seen = new Uint8Array(n)
  let fired = 0
  let duplicate = 0
  let resolve: () => void = () => {}
  const done = new Promise<void>((r) => {
    resolve = r
  })
  const record = (i: number, now: number): void => {
    if (seen[i] === 1) duplicate++
    seen[i] = 1
    lateness[i] = now - (deadlines[i] as number)
    if (++fired === n) resolve()
  }
  collect()
  if (subject === 'wheel') {
    const driver = new WheelDriver<number>({
      maxPending: n,
      onDue: (items) => {
        for (let j = 0; j < items.length; j++) record(items[j] as number, performance.now())
      },
    })
    for (let i = 0; i < n; i++) deadlines[i] = driver.schedule(delays[i] as number, i).deadline
  } else {
    for (let i = 0; i < n; i++) {
      deadlines[i] = performance.now() + (delays[i] as number)
      setTimeout(() => record(i, performance.now()), delays[i] as number)
    }
  }
  const cpu0 = process.cpuUsage()
  await withDeadline(done, deadlineMs, () => `${subject} on the real clock: ${fired} of ${n} timers fired`)
  const cpu = process.cpuUsage(cpu0)
  expectEqual(`${subject} on the real clock: timers delivered twice`, duplicate, 0)
  if (subject === 'wheel') {
    const early = lateness.reduce((k, l) => (l < 0 ? k + 1 : k), 0)
    if (early > 0) throw new BenchError(`the wheel delivered ${early} of ${n} timers before their deadline`)
  }
  return { cpuNsPerTimer: ((cpu.user + cpu.system) * 1000) / n, lateness }
}

/** Lateness percentiles (ms) and the share of early deliveries. */
export interface LatenessSummary {
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly min: number
  readonly earlyShare: number
}

/** Summarizes one run's lateness sample. */
export function summarizeLateness(lateness: Float64Array): LatenessSummary {
  const sorted = Float64Array.from(lateness).sort()
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
  const early = sorted.findIndex((l) => l >= 0)
  return {
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] as number,
    min: sorted[0] as number,
    earlyShare: (early < 0 ? sorted.length : early) / sorted.length,
  }
}
