/**
 * Small numeric helpers and the number formats every table uses.
 *
 * @module
 */

export { median, spread } from '@flowing/tune'

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
