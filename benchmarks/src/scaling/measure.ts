/**
 * The three dimensions of the scaling suite, each swept over its sizes with the runs interleaved
 * (run 1 of every size, then run 2 …) so that drift hits all sizes alike, after one untimed warm-up
 * run that lets the JIT settle before the smallest size is timed.
 *
 * @module
 */
import { formatCount } from '../lib/stats.js'
import { makeWorkload, STREAM_BATCH } from '../lib/workload.js'
import type { ScalingConfig } from './cli.js'
import { type Dimension, formatNs, type Point } from './report.js'
import { delayedRun, depthRun, KEY_COUNT, keysRun, keysUsed, pendingDelays, plainWorkload } from './runs.js'

/** Prints one progress line. */
export type Log = (line?: string) => void

/** Quantities of the queue-depth dimension, in order. */
export const DEPTH_QUANTITIES = ['post + drain', 'post alone', 'drain alone'] as const
/** Quantities of the delayed dimension, in order. */
export const DELAYED_QUANTITIES = ['postDelayed()', 'streamed msg beside', 'cancel()'] as const

/** Repetitions that bring `size` up to the config's `minOps`. */
export function repsOf(config: ScalingConfig, size: number): number {
  return Math.max(1, Math.ceil(config.minOps / size))
}

/**
 * Runs `sample(size, run)` for every size, `runs` times, interleaved; logs each sample.
 * @returns per size, per quantity, the samples of every run
 */
async function sweep(
  sizes: readonly number[],
  runs: number,
  quantities: readonly string[],
  sample: (size: number) => Promise<readonly number[]>,
  log: Log,
): Promise<number[][][]> {
  const out = sizes.map(() => quantities.map((): number[] => []))
  for (let run = 1; run <= runs; run++) {
    for (const [s, size] of sizes.entries()) {
      const values = await sample(size)
      for (const [q, v] of values.entries()) out[s]?.[q]?.push(v)
      const text = values.map((v, q) => `${quantities[q]} ${formatNs(v).padStart(6)} ns`).join('  ')
      log(`  run ${run}/${runs}  ${formatCount(size).padStart(9)}  ${text}`)
    }
  }
  return out
}

/** Queue depth: Q messages posted into a paused loop, then drained. */
export async function measureDepth(config: ScalingConfig, log: Log): Promise<Dimension> {
  const workloads = new Map(config.depths.map((q) => [q, plainWorkload(q)]))
  await depthRun(plainWorkload(10_000), 1, config.deadlineMs) // warm-up
  const runs = await sweep(
    config.depths,
    config.runs,
    DEPTH_QUANTITIES,
    async (q) => {
      const s = await depthRun(workloads.get(q) ?? plainWorkload(q), repsOf(config, q), config.deadlineMs)
      return [s.total, s.post, s.drain]
    },
    log,
  )
  return {
    id: 'queue',
    title: 'Queue depth',
    sizeLabel: 'messages queued',
    quantities: DEPTH_QUANTITIES,
    points: config.depths.map((size, i) => ({ size, runs: runs[i] ?? [] })),
  }
}

/** Distinct keys: a streamed workload over K keys. */
export async function measureKeys(config: ScalingConfig, log: Log): Promise<Dimension> {
  const n = config.keyMessages
  const workloads = new Map(config.keyCounts.map((k) => [k, makeWorkload(n, k, 'random', 0x6e75 + k)]))
  await keysRun(makeWorkload(10_000, KEY_COUNT, 'random'), config.deadlineMs) // warm-up
  const runs = await sweep(
    config.keyCounts,
    config.runs,
    ['streamed msg'],
    async (k) => [await keysRun(workloads.get(k) ?? makeWorkload(n, k, 'random'), config.deadlineMs)],
    log,
  )
  const points: Point[] = config.keyCounts.map((size, i) => {
    const w = workloads.get(size)
    const { used, once } = w === undefined ? { used: 0, once: 0 } : keysUsed(w)
    const note = `${formatCount(used)} (${((100 * once) / Math.max(1, used)).toFixed(0)} % of them once)`
    return { size, runs: runs[i] ?? [], note }
  })
  return {
    id: 'keys',
    title: 'Distinct keys',
    sizeLabel: 'distinct keys',
    quantities: ['streamed msg'],
    noteHeader: `keys used by ${formatCount(n)} msgs`,
    points,
  }
}

/** Delayed messages: D pending on the wheel, a streamed workload beside them, then their cancels. */
export async function measureDelayed(config: ScalingConfig, log: Log): Promise<Dimension> {
  const beside = plainWorkload(config.besideMessages)
  const delays = new Map(config.delayedCounts.map((d) => [d, pendingDelays(d)]))
  await delayedRun(pendingDelays(10_000), plainWorkload(10 * STREAM_BATCH), 1, config.deadlineMs) // warm-up
  const runs = await sweep(
    config.delayedCounts,
    config.runs,
    DELAYED_QUANTITIES,
    async (d) => {
      const s = await delayedRun(delays.get(d) ?? pendingDelays(d), beside, repsOf(config, d), config.deadlineMs)
      return [s.postDelayed, s.beside, s.cancel]
    },
    log,
  )
  return {
    id: 'delayed',
    title: 'Delayed messages pending on the wheel',
    sizeLabel: 'delayed pending',
    quantities: DELAYED_QUANTITIES,
    points: config.delayedCounts.map((size, i) => ({ size, runs: runs[i] ?? [] })),
  }
}
