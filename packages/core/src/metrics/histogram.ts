import type { HistogramSnapshot } from '../contracts/metrics.js'

/**
 * A log-linear latency histogram in a fixed typed array: O(1) record, no allocation, ≤ 6.25 % relative
 * error (16 sub-buckets per power of two, the HdrHistogram layout), range 1 µs … ~35 minutes.
 *
 * @module
 */

const SUB = 16 // sub-buckets per octave
const SUB_BITS = 4
const BUCKETS = SUB + (31 - SUB_BITS) * SUB

/** Bucket of a value in whole microseconds. */
function bucketOf(us: number): number {
  if (us < SUB) return us < 0 ? 0 : us | 0
  const i = us >= 0x7fffffff ? 0x7fffffff : us | 0
  const e = 31 - Math.clz32(i)
  return SUB + (e - SUB_BITS) * SUB + ((i >>> (e - SUB_BITS)) & (SUB - 1))
}

/** Middle of a bucket, in microseconds. */
function midpointOf(bucket: number): number {
  if (bucket < SUB) return bucket
  const e = ((bucket - SUB) >> SUB_BITS) + SUB_BITS
  const low = (SUB + ((bucket - SUB) & (SUB - 1))) * 2 ** (e - SUB_BITS)
  return low + 2 ** (e - SUB_BITS) / 2
}

/** The quantiles a snapshot reports, in the order of its fields. */
const QUANTILES = [0.5, 0.9, 0.99] as const

/**
 * The highest bucket that can hold a value: every recorded value is ≤ the max (negative ones and 0
 * land in bucket 0, NaN in none), and {@link bucketOf} is monotonic, so scans stop here.
 */
function topOf(maxMs: number): number {
  return bucketOf(maxMs * 1000)
}

/**
 * p50, p90 and p99 of `count` values in `counts[0…top]` in one pass, into `out` — each exactly what
 * {@link Histogram.quantile} returns: the midpoint of the bucket where the rank is reached (≤ max), the
 * max when the buckets hold fewer values than the rank (NaN recordings count but sit in no bucket).
 */
function quantilesInto(counts: Float64Array, top: number, count: number, max: number, out: Float64Array): void {
  if (count === 0) {
    out.fill(0)
    return
  }
  let k = 0
  let rank = Math.max(1, Math.ceil(QUANTILES[0] * count))
  let seen = 0
  for (let i = 0; i <= top; i++) {
    seen += counts[i] as number
    while (seen >= rank) {
      out[k] = Math.min(midpointOf(i) / 1000, max)
      if (++k === QUANTILES.length) return
      rank = Math.max(1, Math.ceil((QUANTILES[k] as number) * count))
    }
  }
  for (; k < QUANTILES.length; k++) out[k] = max
}

/** Bucket counts summed over several histograms, and their quantiles (reused: `combinedSnapshot` allocates none). */
const summed = new Float64Array(BUCKETS)
const summedQuantiles = new Float64Array(QUANTILES.length)

/**
 * Records durations in milliseconds.
 *
 * @example
 * ```ts
 * const h = new Histogram()
 * h.record(0.25)
 * h.snapshot().p99 // ≈ 0.25
 * ```
 *
 * @group Metrics
 */
export class Histogram {
  readonly #counts = new Float64Array(BUCKETS)
  #count = 0
  #sum = 0
  #max = 0
  /** p50, p90, p99 as of `#quantilesAt` recordings: every change but a reset raises the count. */
  readonly #quantiles = new Float64Array(QUANTILES.length)
  #quantilesAt = -1

  /** Records one duration (ms). Negative values count as 0. */
  record(ms: number): void {
    const b = bucketOf(ms * 1000)
    this.#counts[b] = (this.#counts[b] as number) + 1
    this.#count++
    this.#sum += ms
    if (ms > this.#max) this.#max = ms
  }

  /** Adds every value of `other` into this histogram. */
  merge(other: Histogram): void {
    const top = topOf(other.#max)
    for (let i = 0; i <= top; i++) this.#counts[i] = (this.#counts[i] as number) + (other.#counts[i] as number)
    this.#count += other.#count
    this.#sum += other.#sum
    if (other.#max > this.#max) this.#max = other.#max
  }

  /** Number of recorded values. */
  get count(): number {
    return this.#count
  }

  /** The value below which a fraction `q` (0–1) of recordings fall, in ms (bucket midpoint, ≤ max). */
  quantile(q: number): number {
    if (this.#count === 0) return 0
    const rank = Math.max(1, Math.ceil(q * this.#count))
    const top = topOf(this.#max)
    let seen = 0
    for (let i = 0; i <= top; i++) {
      seen += this.#counts[i] as number
      if (seen >= rank) return Math.min(midpointOf(i) / 1000, this.#max)
    }
    return this.#max
  }

  /** Count, mean, p50/p90/p99 and max, in ms (a new object each call). */
  snapshot(): HistogramSnapshot {
    const count = this.#count
    const q = this.#quantiles
    if (this.#quantilesAt !== count) {
      quantilesInto(this.#counts, topOf(this.#max), count, this.#max, q)
      this.#quantilesAt = count
    }
    return snapshotOf(count, this.#sum, this.#max, q)
  }

  /**
   * The snapshot of all `parts` together: what merging them, in order, into a new histogram and taking
   * its snapshot gives — without the copy (the buckets are summed only up to each part's max).
   */
  static combinedSnapshot(parts: readonly Histogram[]): HistogramSnapshot {
    let count = 0
    let sum = 0
    let max = 0
    let top = 0
    for (const h of parts) {
      count += h.#count
      sum += h.#sum
      if (h.#max > max) max = h.#max
    }
    if (count !== 0) {
      top = topOf(max)
      summed.fill(0, 0, top + 1)
      for (const h of parts) {
        const counts = h.#counts
        const end = topOf(h.#max)
        for (let i = 0; i <= end; i++) summed[i] = (summed[i] as number) + (counts[i] as number)
      }
    }
    quantilesInto(summed, top, count, max, summedQuantiles)
    return snapshotOf(count, sum, max, summedQuantiles)
  }

  /** Forgets every recording. */
  reset(): void {
    this.#counts.fill(0)
    this.#count = 0
    this.#sum = 0
    this.#max = 0
    this.#quantilesAt = -1
  }
}

/** The plain-data snapshot of a histogram's figures. */
function snapshotOf(count: number, sum: number, max: number, q: Float64Array): HistogramSnapshot {
  return {
    count,
    mean: count === 0 ? 0 : sum / count,
    p50: q[0] as number,
    p90: q[1] as number,
    p99: q[2] as number,
    max,
  }
}
