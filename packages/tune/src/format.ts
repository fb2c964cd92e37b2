/**
 * Number formats of the tuner's messages and report.
 *
 * @module
 */

/**
 * `1 worker`, `16 workers`.
 *
 * @group Report
 */
export function workerCount(n: number): string {
  return `${n} worker${n === 1 ? '' : 's'}`
}

/**
 * Milliseconds, short: `0.012`, `3.4`, `812`; `—` for NaN (no figure).
 *
 * @group Report
 */
export function ms(value: number): string {
  if (Number.isNaN(value)) return '—'
  return value >= 100
    ? value.toFixed(0)
    : value >= 1
      ? value.toFixed(1)
      : value >= 0.001
        ? value.toFixed(3)
        : `${+value.toPrecision(2)}`
}

/**
 * Messages per second, rounded, with thousands separators: `3,040/s`.
 *
 * @group Report
 */
export function perSecond(value: number): string {
  return `${Math.round(value).toLocaleString('en-US')}/s`
}

/**
 * A duration in seconds, short: `0.25 s`, `2 s`, `1.5 s`.
 *
 * @group Report
 */
export function seconds(valueMs: number): string {
  return `${+(valueMs / 1000).toPrecision(3)} s`
}
