/**
 * The knee of the throughput curve and the words for its shape. Pure functions of the measured points,
 * so the smoke run can check them on hand-made curves.
 *
 * @module
 */
import { ms, perSecond, workerCount } from './format.js'
import { spread } from './stats.js'

/**
 * One worker count's summary (medians over its trials). Times in ms.
 *
 * @group Verdicts
 */
export interface SweepPoint {
  readonly workers: number
  /** Successful completions per second. */
  readonly throughput: number
  /** Lifecycle (post → settled) p99. */
  readonly p99: number
  /** Share of the window the event loop was busy, 0–1. */
  readonly utilization: number
  /** Throughput of each trial (the point's median is theirs); without it, the median alone is the range. */
  readonly trialThroughputs?: readonly number[]
}

/**
 * A count whose trials spread more than this (max − min over the median) gets a warning.
 *
 * @group Verdicts
 */
export const SPREAD_LIMIT = 0.15

const low = (p: SweepPoint): number => Math.min(...(p.trialThroughputs ?? []), p.throughput)
const high = (p: SweepPoint): number => Math.max(...(p.trialThroughputs ?? []), p.throughput)

/** Whether `a` is below `b` beyond the noise: every trial of `a` under every trial of `b`. */
function clearlyBelow(a: SweepPoint, b: SweepPoint): boolean {
  return high(a) < low(b)
}

/**
 * The verdict on a sweep.
 *
 * @group Verdicts
 */
export interface Knee {
  /** The recommended worker count, or `undefined` when no count meets both conditions. */
  readonly workers: number | undefined
  /** The highest throughput measured, and where. */
  readonly peak: SweepPoint
  /** Throughput at or above this counts as "at the peak". */
  readonly threshold: number
  /** Why there is no recommendation (when `workers` is undefined). */
  readonly reason: string | undefined
}

/**
 * The smallest worker count whose throughput is within `tolerance` of the peak and whose p99 meets
 * `p99Ms`.
 *
 * @remarks Counts past the knee buy nothing but memory and contention; counts before it leave
 * throughput on the table. When the p99 target rules out every count at the peak, there is no
 * recommendation and `reason` names the best p99 seen, so the caller can report an impossible target.
 * @throws RangeError for an empty sweep
 *
 * @group Verdicts
 */
export function findKnee(points: readonly SweepPoint[], tolerance: number, p99Ms: number): Knee {
  if (points.length === 0) throw new RangeError('findKnee needs at least one point')
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const peak = sorted.reduce((best, p) => (p.throughput > best.throughput ? p : best))
  const threshold = peak.throughput * (1 - tolerance)
  const atPeak = sorted.filter((p) => p.throughput >= threshold)
  const knee = atPeak.find((p) => p.p99 <= p99Ms)
  if (knee !== undefined) return { workers: knee.workers, peak, threshold, reason: undefined }
  const bestP99 = sorted.reduce((best, p) => (p.p99 < best.p99 ? p : best))
  const reason =
    bestP99.p99 > p99Ms
      ? `no worker count met p99 ≤ ${ms(p99Ms)} ms: the best was ${ms(bestP99.p99)} ms at ${workerCount(bestP99.workers)}, so the target is below what these handlers can do`
      : `the counts that met p99 ≤ ${ms(p99Ms)} ms (best: ${workerCount(bestP99.workers)}) are more than ${Math.round(tolerance * 100)} % below the peak throughput; relax --p99 or accept less throughput`
  return { workers: undefined, peak, threshold, reason }
}

/**
 * The curve's shape, from which the explanation follows.
 *
 * @group Verdicts
 */
export type Shape = 'scales' | 'plateau' | 'flat-cpu' | 'flat-serial' | 'drop'

/**
 * Classifies the curve. The event loop comes first: busy ≥ 80 % of the time at the first count means
 * CPU-bound (`flat-cpu`), whatever the throughput did — on a loaded machine the curve of a CPU-bound
 * handler is noise. Then, a fall or a rise counts only when it is larger than twice the tolerance
 * **and** outside the trials' spread (every trial of the lower count under every trial of the higher):
 * `drop` when the last count falls from the peak so, `flat-serial` when the best count gains under
 * 20 % over the first, `scales` when the last step still gained so (more workers might still help),
 * `plateau` otherwise.
 *
 * @group Verdicts
 */
export function classify(points: readonly SweepPoint[], tolerance: number): Shape {
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const first = sorted[0] as SweepPoint
  const last = sorted[sorted.length - 1] as SweepPoint
  const peak = sorted.reduce((best, p) => (p.throughput > best.throughput ? p : best))
  if (first.utilization >= 0.8) return 'flat-cpu'
  const band = 2 * Math.max(tolerance, 0.05)
  const drop = last.throughput < peak.throughput * (1 - band) && clearlyBelow(last, peak)
  if (drop) return 'drop'
  if (peak.throughput < first.throughput * 1.2) return 'flat-serial'
  const beforeLast = sorted[sorted.length - 2]
  if (
    beforeLast !== undefined &&
    last.throughput > beforeLast.throughput * (1 + band) &&
    clearlyBelow(beforeLast, last)
  ) {
    return 'scales'
  }
  return 'plateau'
}

/**
 * The counts whose trials spread more than {@link SPREAD_LIMIT}, with their spread (0–1).
 *
 * @group Verdicts
 */
export function noisyCounts(points: readonly SweepPoint[]): { readonly workers: number; readonly spread: number }[] {
  return points.flatMap((p) => {
    const trials = p.trialThroughputs ?? []
    if (trials.length < 2) return []
    const s = spread(trials)
    return s > SPREAD_LIMIT ? [{ workers: p.workers, spread: s }] : []
  })
}

/**
 * A curve still scaling at its largest count has no knee yet: whatever `knee` found is withdrawn, and
 * the reason suggests larger counts.
 *
 * @group Verdicts
 */
export function withdrawWhileScaling(knee: Knee, points: readonly SweepPoint[]): Knee {
  const largest = Math.max(...points.map((p) => p.workers))
  return {
    ...knee,
    workers: undefined,
    reason: `still scaling at ${workerCount(largest)}, the largest count tried, so there is no knee to recommend yet; sweep larger counts (--workers ${largest},${largest * 2},${largest * 4})`,
  }
}

/**
 * Explains `shape` in a few sentences, naming the figures.
 *
 * @group Verdicts
 */
export function explain(
  shape: Shape,
  points: readonly SweepPoint[],
  tolerance: number,
  offered?: number | undefined,
): string {
  const served = offered === undefined ? undefined : servedFrom(points, tolerance, offered)
  if (served !== undefined) return served
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const first = sorted[0] as SweepPoint
  const last = sorted[sorted.length - 1] as SweepPoint
  const peak = sorted.reduce((best, p) => (p.throughput > best.throughput ? p : best))
  const rate = (p: SweepPoint): string => perSecond(p.throughput)
  const busy = `${Math.round(first.utilization * 100)} %`
  switch (shape) {
    case 'flat-cpu':
      return (
        `CPU-bound: ${rate(first)} at ${workerCount(first.workers)} ` +
        (peak.throughput < first.throughput * 1.2
          ? `and no real gain at any count (peak ${rate(peak)} at ${peak.workers}); `
          : `(peak ${rate(peak)} at ${peak.workers}: with the thread this busy, the differences between counts are the machine's noise, not parallelism); `) +
        `the event loop was busy ${busy} of the time at ${workerCount(first.workers)}. Flowing's workers share one JavaScript thread, so synchronous ` +
        'work cannot run in parallel: more workers only add queueing. Keep the count low and move the CPU work to ' +
        "a worker-thread pool (`threaded()` of @flowing/threads, which keeps the loop's guarantees); then the handler is I/O-bound from " +
        "the loop's point of view and this sweep will show the pool's parallelism."
      )
    case 'flat-serial':
      return (
        `Serialized: throughput stays near ${rate(first)} at every count, yet the event loop was busy only ${busy} ` +
        'of the time: the handlers wait on one shared resource (a lock, a connection, a single-slot downstream). ' +
        'More workers only queue behind it; widen that resource or shorten the time it is held.'
      )
    case 'drop':
      return (
        `Contention: throughput peaks at ${rate(peak)} with ${workerCount(peak.workers)} and falls to ${rate(last)} at ` +
        `${last.workers} (${Math.round((1 - last.throughput / peak.throughput) * 100)} % lower). Past the peak, extra ` +
        'workers fight over something shared (a lock, a pool, a downstream that degrades under load) and each one ' +
        'makes the rest slower: more workers is worse, not just useless.'
      )
    case 'scales':
      return (
        `Still scaling: throughput rises from ${rate(first)} at ${first.workers} to ${rate(last)} at ${last.workers} ` +
        'workers, the largest count tried. The handlers wait on I/O that has not saturated yet: try larger counts ' +
        '(--workers …,64,128) to find where the downstream stops keeping up.'
      )
    case 'plateau': {
      // Where the curve reaches the peak band: the count the words should name, not the noisy argmax.
      const level = sorted.find((p) => p.throughput >= peak.throughput * (1 - tolerance)) ?? peak
      return (
        `I/O-bound: throughput rises from ${rate(first)} at ${workerCount(first.workers)} to ${rate(level)} at ` +
        `${workerCount(level.workers)} and levels off there (peak ${rate(peak)} at ${peak.workers}). Each worker ` +
        "overlaps one handler's waiting; once the downstream is saturated (its concurrency limit or its own " +
        'capacity), extra workers only wait in its queue and raise latency.'
      )
    }
  }
}

/**
 * Open loop: when some count serves the whole offered rate, the plateau is the rate, not the downstream —
 * the words must say so.
 */
function servedFrom(points: readonly SweepPoint[], tolerance: number, rate: number): string | undefined {
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const from = sorted.find((p) => p.throughput >= rate * (1 - tolerance))
  if (from === undefined) return undefined
  const behind = sorted.filter((p) => p.workers < from.workers)
  const worst = behind[0]
  return (
    `Open loop: from ${workerCount(from.workers)} on, the whole offered ${perSecond(rate)} is served ` +
    `(p99 ${ms(from.p99)} ms); more workers add nothing at this rate.` +
    (worst === undefined
      ? ''
      : ` Below that the loop falls behind: its queue grows for as long as the traffic lasts, and latency with ` +
        `it (p99 ${ms(worst.p99)} ms at ${workerCount(worst.workers)} within one trial) until the capacity is reached and posts are refused.`)
  )
}
