/**
 * A log-linear latency histogram in a fixed typed array: O(1) record, no allocation, ≤ 6.25 % relative
 * error (16 sub-buckets per power of two, the HdrHistogram layout), range 1 µs … ~35 minutes.
 *
 * @module
 */

/** Percentiles of one histogram, in milliseconds. */
export interface HistogramSnapshot {
  /** Number of recorded values. */
  readonly count: number
  /** Arithmetic mean (exact). */
  readonly mean: number
  /** Median. */
  readonly p50: number
  /** 90th percentile. */
  readonly p90: number
  /** 99th percentile. */
  readonly p99: number
  /** Largest value (exact). */
  readonly max: number
}

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

/**
 * Records durations in milliseconds.
 *
 * @example
 * ```ts
 * const h = new Histogram()
 * h.record(0.25)
 * h.snapshot().p99 // ≈ 0.25
 * ```
 */
export class Histogram {
  readonly #counts = new Float64Array(BUCKETS)
  #count = 0
  #sum = 0
  #max = 0

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
    for (let i = 0; i < BUCKETS; i++) this.#counts[i] = (this.#counts[i] as number) + (other.#counts[i] as number)
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
    let seen = 0
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#counts[i] as number
      if (seen >= rank) return Math.min(midpointOf(i) / 1000, this.#max)
    }
    return this.#max
  }

  /** Count, mean, p50/p90/p99 and max, in ms. */
  snapshot(): HistogramSnapshot {
    return {
      count: this.#count,
      mean: this.#count === 0 ? 0 : this.#sum / this.#count,
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      max: this.#max,
    }
  }

  /** Forgets every recording. */
  reset(): void {
    this.#counts.fill(0)
    this.#count = 0
    this.#sum = 0
    this.#max = 0
  }
}
