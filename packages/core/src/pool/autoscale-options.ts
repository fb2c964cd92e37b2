/**
 * The `workers` option as a range: `{ min, max, … }` turns the autoscaler on. Its types, defaults and
 * validation live here so `options.ts` only routes to them.
 *
 * @module
 */
import type { AutoscaleOptions, ResolvedAutoscale } from '../contracts/pool.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

const KNOWN: readonly (keyof AutoscaleOptions)[] = [
  'min',
  'max',
  'initial',
  'intervalMs',
  'cooldownMs',
  'growFactor',
  'minGain',
  'utilizationCeiling',
  'idleSamples',
  'memoryMs',
  'utilization',
]

const MAX_WORKERS = 65_536

/** `performance.eventLoopUtilization()` deltas: the share of time busy since the previous call. */
export function eventLoopUtilization(): () => number {
  let last = performance.eventLoopUtilization()
  return () => {
    const now = performance.eventLoopUtilization()
    const delta = performance.eventLoopUtilization(now, last)
    last = now
    return delta.utilization
  }
}

/**
 * Validates the `workers` option: a count, or an {@link AutoscaleOptions} range.
 * @throws InvalidArgumentError naming `options.workers` or `options.workers.<field>`
 */
export function checkWorkers(name: string, value: unknown): number | ResolvedAutoscale {
  if (typeof value !== 'object' || value === null) return check.positiveInteger(name, value, MAX_WORKERS)
  const o = check.optionGroup(name, value, KNOWN, {}) as { readonly [K in keyof AutoscaleOptions]?: unknown }
  const min = check.positiveInteger(`${name}.min`, o.min, MAX_WORKERS)
  const max = check.positiveInteger(`${name}.max`, o.max, MAX_WORKERS)
  if (max < min) throw new InvalidArgumentError(`${name}.max`, `an integer ≥ \`min\` (${min})`, max)
  const initial = o.initial === undefined ? min : check.positiveInteger(`${name}.initial`, o.initial, max)
  if (initial < min) throw new InvalidArgumentError(`${name}.initial`, `an integer in [${min}, ${max}]`, initial)
  const intervalMs = o.intervalMs === undefined ? 1000 : positiveMs(`${name}.intervalMs`, o.intervalMs)
  const cooldownMs = o.cooldownMs === undefined ? 3 * intervalMs : positiveMs(`${name}.cooldownMs`, o.cooldownMs)
  if (cooldownMs < intervalMs) {
    throw new InvalidArgumentError(`${name}.cooldownMs`, `a number of ms ≥ \`intervalMs\` (${intervalMs})`, cooldownMs)
  }
  return {
    min,
    max,
    initial,
    intervalMs,
    cooldownMs,
    growFactor: o.growFactor === undefined ? 1.5 : within(`${name}.growFactor`, o.growFactor, 1, 4, 'in (1, 4]'),
    minGain: o.minGain === undefined ? 0.1 : within(`${name}.minGain`, o.minGain, 0, 0.999, 'in (0, 1)'),
    utilizationCeiling:
      o.utilizationCeiling === undefined
        ? 0.85
        : within(`${name}.utilizationCeiling`, o.utilizationCeiling, 0, 1, 'in (0, 1]'),
    idleSamples: o.idleSamples === undefined ? 3 : check.positiveInteger(`${name}.idleSamples`, o.idleSamples, 1000),
    memoryMs: o.memoryMs === undefined ? 60_000 : positiveMs(`${name}.memoryMs`, o.memoryMs),
    utilization:
      o.utilization === undefined
        ? eventLoopUtilization()
        : (check.fn(`${name}.utilization`, o.utilization) as () => number),
  }
}

function positiveMs(name: string, value: unknown): number {
  if (typeof value === 'number' && value > 0 && Number.isFinite(value)) return value
  throw new InvalidArgumentError(name, 'a positive finite number of ms', value)
}

// A number in (low, high].
function within(name: string, value: unknown, low: number, high: number, rule: string): number {
  if (typeof value === 'number' && value > low && value <= high) return value
  throw new InvalidArgumentError(name, `a number ${rule}`, value)
}
