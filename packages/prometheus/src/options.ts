/**
 * The options of {@link prometheus} and their checks: a typo, a bad prefix or bad buckets throw
 * `InvalidArgumentError` before anything is registered.
 *
 * @module
 */
import { InvalidArgumentError } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import { type Registry, register } from 'prom-client'

/**
 * Default histogram buckets (seconds): 1 ms to 60 s, roughly ×2.5 apart — a fast handler's
 * sub-millisecond attempts land in the first bucket, a slow retry chain's lifecycle in the last ones.
 *
 * @group Exporter
 */
export const DEFAULT_BUCKETS: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
])

/**
 * Options of {@link prometheus}.
 *
 * @group Exporter
 */
export interface PrometheusOptions {
  /**
   * The prom-client registry to register in.
   * @defaultValue prom-client's default `register`
   */
  readonly registry?: Registry
  /**
   * Prefix of every metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`, usually ending in `_`.
   * @defaultValue `'flowing_'`
   */
  readonly prefix?: string
  /**
   * Constant labels on every series of this loop. `loop` tells loops apart in one registry (default
   * `'default'`); other names must be the same for every loop exported with one registry and prefix.
   * Names may not be the exporter's own (`type`, `outcome`, `error_class`, `reason`, `result`, `le`).
   * @defaultValue `{ loop: 'default' }`
   */
  readonly labels?: Readonly<Record<string, string>>
  /**
   * Histogram bucket upper bounds, in seconds: finite, positive, strictly increasing.
   * @defaultValue {@link DEFAULT_BUCKETS}
   */
  readonly buckets?: readonly number[]
}

/** The options, checked and with their defaults. */
export interface ResolvedOptions {
  readonly registry: Registry
  readonly prefix: string
  /** `loop` first, then the others in the order given. */
  readonly labels: Readonly<Record<string, string>>
  readonly buckets: readonly number[]
}

const KNOWN = ['registry', 'prefix', 'labels', 'buckets'] as const
const check = argumentChecks(InvalidArgumentError)
/**
 * Label names the exporter sets itself (and `le`, `quantile`, which Prometheus reserves).
 *
 * @group Exporter
 */
export const RESERVED_LABELS: readonly string[] = [
  'type',
  'outcome',
  'error_class',
  'reason',
  'result',
  'le',
  'quantile',
]
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/**
 * Checks `options` (an object with known keys only) and fills the defaults.
 * @throws InvalidArgumentError naming the bad option, with a did-you-mean hint for a typo
 */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (options === undefined)
    return { registry: register, prefix: 'flowing_', labels: { loop: 'default' }, buckets: DEFAULT_BUCKETS }
  const o: Partial<Record<(typeof KNOWN)[number], unknown>> = check.plainObject('options', options)
  check.knownKeys('options', o, KNOWN)
  return {
    registry: o.registry === undefined ? register : registryOption(o.registry),
    prefix: o.prefix === undefined ? 'flowing_' : prefixOption(o.prefix),
    labels: labelsOption(o.labels),
    buckets: o.buckets === undefined ? DEFAULT_BUCKETS : bucketsOption(o.buckets),
  }
}

function registryOption(value: unknown): Registry {
  const r = value as Partial<Registry> | null
  if (
    r === null ||
    typeof r !== 'object' ||
    typeof r.registerMetric !== 'function' ||
    typeof r.removeSingleMetric !== 'function' ||
    typeof r.getSingleMetric !== 'function'
  ) {
    throw new InvalidArgumentError('options.registry', "a prom-client Registry (or prom-client's `register`)", value)
  }
  return value as Registry
}

function prefixOption(value: unknown): string {
  if (typeof value !== 'string' || (value !== '' && !METRIC_NAME.test(value))) {
    throw new InvalidArgumentError('options.prefix', 'a metric name prefix matching [a-zA-Z_:][a-zA-Z0-9_:]*', value)
  }
  return value
}

function labelsOption(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return { loop: 'default' }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError('options.labels', 'an object of label name → string value', value)
  }
  const given = value as Record<string, unknown>
  const labels: Record<string, string> = { loop: 'default' }
  for (const [name, v] of Object.entries(given)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__')) {
      throw new InvalidArgumentError(
        `options.labels.${name}`,
        'a label name matching [a-zA-Z_][a-zA-Z0-9_]*, not starting with __',
        name,
      )
    }
    if (RESERVED_LABELS.includes(name)) {
      throw new InvalidArgumentError(
        `options.labels.${name}`,
        `a label name other than ${RESERVED_LABELS.join(', ')} (the exporter sets those)`,
        name,
      )
    }
    if (typeof v !== 'string') throw new InvalidArgumentError(`options.labels.${name}`, 'a string', v)
    labels[name] = v
  }
  return labels
}

function bucketsOption(value: unknown): readonly number[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidArgumentError('options.buckets', 'a non-empty array of bucket bounds in seconds', value)
  }
  for (let i = 0; i < value.length; i++) {
    const b: unknown = value[i]
    if (typeof b !== 'number' || !Number.isFinite(b) || b <= 0) {
      throw new InvalidArgumentError(`options.buckets[${i}]`, 'a finite positive number of seconds', b)
    }
    if (i > 0 && b <= (value[i - 1] as number)) {
      throw new InvalidArgumentError(`options.buckets[${i}]`, `greater than the bucket before it (${value[i - 1]})`, b)
    }
  }
  return Object.freeze([...(value as number[])])
}
