/**
 * **@flowing/prometheus** — a Flowing loop's numbers on Prometheus through prom-client, in one line:
 * counters and histograms written from the loop's events per message type and outcome (never reset,
 * so they aggregate across pods), gauges read from `loop.metrics()` at scrape time.
 *
 * @example
 * ```ts
 * import { createLoop } from '@flowing/core'
 * import { prometheus } from '@flowing/prometheus'
 * import { Registry } from 'prom-client'
 *
 * const loop = createLoop<{ ship: { orderId: string } }>({ logger: false })
 * const metrics = prometheus(loop, { registry: new Registry(), labels: { loop: 'orders' } })
 * loop.on('ship', () => {})
 * loop.post('ship', { orderId: 'o-1' })
 * await loop.stop()
 * console.log(await metrics.registry.metrics()) // flowing_processed_total{loop="orders",type="ship"} 1 …
 * metrics.unregister()
 * ```
 *
 * @packageDocumentation
 * @module @flowing/prometheus
 */
export { MetricsRegisteredError } from './errors.js'
export { DEFAULT_BUCKETS, type PrometheusOptions, RESERVED_LABELS } from './options.js'
export { type PrometheusExporter, prometheus } from './prometheus.js'
