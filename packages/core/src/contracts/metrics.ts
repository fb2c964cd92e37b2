/**
 * Metric contracts shared by the metrics snapshot and the journal's stats.
 *
 * @module
 */

/**
 * Percentiles of one histogram, in milliseconds.
 *
 * @group Metrics
 */
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
