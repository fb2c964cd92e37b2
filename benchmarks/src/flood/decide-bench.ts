/**
 * The admission decision's cost: `WatermarkController.decide()` on the admit, shed and reject paths,
 * in ns per call and heap bytes per call (the target: ≤ 100 ns, nothing allocated on the reject path).
 */
import { WatermarkController } from '@flowing/backpressure'
import { collect, heapUsed } from '../lib/gc.js'

/** One path's figures. */
export interface DecideFigure {
  readonly path: 'admit' | 'shed' | 'reject'
  readonly nsPerCall: number
  readonly bytesPerCall: number
}

const PATHS = [
  { path: 'admit', fill: 0.3, priority: 5 },
  { path: 'shed', fill: 0.85, priority: 7 },
  { path: 'reject', fill: 0.97, priority: 0 },
] as const

/** Median of `runs` timings of `calls` decisions per path, plus heap growth per call without a GC. */
export function measureDecide(calls: number, runs: number): DecideFigure[] {
  let clock = 0
  const controller = new WatermarkController({ now: () => clock, admissionBreaker: false })
  return PATHS.map(({ path, fill, priority }) => {
    controller.update(fill)
    let sink = 0
    const timings: number[] = []
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now()
      for (let i = 0; i < calls; i++) if (controller.decide(fill, priority, 2).admitted) sink++
      timings.push(((performance.now() - t0) * 1e6) / calls)
      clock += 1
    }
    collect()
    const before = heapUsed()
    for (let i = 0; i < calls; i++) if (controller.decide(fill, priority, 2).admitted) sink++
    const bytesPerCall = Math.max(0, heapUsed() - before) / calls
    if (sink < 0) throw new Error('unreachable')
    timings.sort((a, b) => a - b)
    return { path, nsPerCall: timings[Math.floor(runs / 2)] as number, bytesPerCall }
  })
}
