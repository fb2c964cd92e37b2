/**
 * The two statistics the tuner summarizes trials with.
 *
 * @module
 */

/**
 * Median of a non-empty sample (mean of the two middle values for an even count).
 * @throws RangeError for an empty sample
 *
 * @group Helpers
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty sample')
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const upper = sorted[mid] as number
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] as number) + upper) / 2
}

/**
 * Spread of a sample relative to its median: (max − min) / median.
 *
 * @group Helpers
 */
export function spread(values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values)
}
