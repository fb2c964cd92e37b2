/**
 * Small numeric helpers and the number formats every table uses.
 *
 * @module
 */

/** Median of a non-empty sample (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty sample')
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const upper = sorted[mid] as number
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] as number) + upper) / 2
}

/** Spread of a sample relative to its median: (max − min) / median. */
export function spread(values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values)
}

/** Messages per second as millions, three significant digits: `1.62`, `0.0221`. */
export function formatRate(msgsPerSecond: number): string {
  const m = msgsPerSecond / 1e6
  return m >= 100 ? m.toFixed(0) : m.toPrecision(3)
}

/** A ratio such as `2.6×` or `48×`. */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return '—'
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}×`
}

/** Milliseconds, short: `0.012`, `3.4`, `812`. */
export function formatMs(ms: number): string {
  if (ms >= 100) return ms.toFixed(0)
  if (ms >= 1) return ms.toFixed(1)
  return ms.toFixed(3)
}

/** An integer with thousands separators: `1,000,000`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US')
}
