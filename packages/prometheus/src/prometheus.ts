/**
 * `prometheus(loop)`: the one-line setup, and the handle that undoes it.
 *
 * @module
 */
import { InvalidArgumentError, type Loop, type MessageMap, type MetricsSnapshot } from '@flowing/core'
import type { Registry } from 'prom-client'
import { MetricsRegisteredError } from './errors.js'
import { type GaugeSource, MetricSet } from './metric-set.js'
import { type PrometheusOptions, resolveOptions } from './options.js'
import { Recorder } from './recorder.js'

/**
 * What {@link prometheus} returns.
 *
 * @group Exporter
 */
export interface PrometheusExporter {
  /** The registry the metrics are in (scrape it with `registry.metrics()`). */
  readonly registry: Registry
  /** The metric names, prefix included, in registration order. */
  readonly names: readonly string[]
  /** The constant labels of this loop's series (`loop` and the ones given). */
  readonly labels: Readonly<Record<string, string>>
  /**
   * Stops exporting the loop: removes its listeners and its series; with the last loop exported to
   * the registry under the prefix, the metrics themselves. Idempotent.
   */
  unregister(): void
  /** The same as {@link PrometheusExporter.unregister}. */
  close(): void
}

// The metric sets of each registry, by prefix.
const sets = new WeakMap<Registry, Map<string, MetricSet>>()
// The loop object behind each gauge source, to tell "the same loop twice" from "two loops, one label".
const loops = new WeakMap<GaugeSource, object>()

/**
 * Exports a loop's numbers to Prometheus through prom-client.
 *
 * @remarks
 * **Counters and histograms** are written from the loop's events (`posted`, `scheduled`, `rejected`,
 * `succeeded`, `failed`, `retrying`, `dead-lettered`, `finished`), per message `type` and, where it
 * applies, `outcome`, `error_class`, `reason` or `result`: never reset, so `rate()` and
 * `histogram_quantile()` aggregate across pods. **Gauges** are read at scrape time from one
 * `loop.metrics()` per loop per scrape. Labels are bounded: message types, outcomes, error classes
 * and error codes are small fixed sets; keys, ids and error messages are never labels.
 *
 * **Once per (registry, prefix, loop).** Several loops share a registry when their `loop` labels differ
 * (and their other label names and buckets match). Registering the same loop twice, or a second loop
 * with the same `loop` label, throws {@link MetricsRegisteredError}.
 *
 * Cost per message: a map lookup and a counter `inc` per event, a histogram `observe` per success and
 * per outcome; per scrape: one `loop.metrics()` per loop.
 *
 * @param loop - the loop to export
 * @param options - see {@link PrometheusOptions}
 * @returns a handle whose `unregister()` undoes the registration
 * @throws InvalidArgumentError for a bad option; MetricsRegisteredError (see above)
 *
 * @group Exporter
 */
export function prometheus<M extends MessageMap>(loop: Loop<M>, options?: PrometheusOptions): PrometheusExporter {
  const { registry, prefix, labels, buckets } = resolveOptions(options)
  const name = labels['loop'] as string
  const set = metricSet(registry, prefix, Object.keys(labels), buckets)
  const taken = set.sources.get(name)
  if (taken !== undefined) throw new MetricsRegisteredError(name, prefix, loops.get(taken) === loop)
  const source = gaugeSource(loop as unknown as Loop<MessageMap>, labels)
  loops.set(source, loop)
  const recorder = new Recorder(loop as unknown as Loop<MessageMap>, set.events, labels)
  set.sources.set(name, source)
  let open = true
  const unregister = (): void => {
    if (!open) return
    open = false
    recorder.detach()
    set.sources.delete(name)
    if (set.sources.size === 0) {
      set.remove()
      sets.get(registry)?.delete(prefix)
    }
  }
  return { registry, names: set.names, labels, unregister, close: unregister }
}

// The registry's set for `prefix`, created on first use; a later loop must match its label names and buckets.
function metricSet(
  registry: Registry,
  prefix: string,
  labelNames: readonly string[],
  buckets: readonly number[],
): MetricSet {
  let byPrefix = sets.get(registry)
  if (byPrefix === undefined) {
    byPrefix = new Map()
    sets.set(registry, byPrefix)
  }
  const existing = byPrefix.get(prefix)
  if (existing === undefined) {
    const set = new MetricSet(registry, prefix, labelNames, buckets)
    byPrefix.set(prefix, set)
    return set
  }
  if (existing.labelNames.join(',') !== labelNames.join(',')) {
    throw new InvalidArgumentError(
      'options.labels',
      `an object with the label names of the loops already exported with prefix \`${prefix}\` (${existing.labelNames.join(', ')})`,
      labelNames,
    )
  }
  if (existing.buckets.join(',') !== buckets.join(',')) {
    throw new InvalidArgumentError(
      'options.buckets',
      `the buckets of the loops already exported with prefix \`${prefix}\` (${existing.buckets.join(', ')})`,
      buckets,
    )
  }
  return existing
}

// A loop's gauge values: one `metrics()` per scrape — prom-client runs every collect() in one
// synchronous pass, so the snapshot is dropped on the next microtask.
function gaugeSource(loop: Loop<MessageMap>, labels: Readonly<Record<string, string>>): GaugeSource {
  let cached: MetricsSnapshot | undefined
  const forget = (): void => {
    cached = undefined
  }
  return {
    labels,
    snapshot() {
      if (cached === undefined) {
        cached = loop.metrics()
        queueMicrotask(forget)
      }
      return cached
    },
  }
}
