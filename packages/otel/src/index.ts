/**
 * OpenTelemetry for a Flowing loop: one `CONSUMER` span per attempt, with the producer's trace
 * context carried in the message's headers (W3C `traceparent` / `tracestate`), and the loop's metrics
 * through an OTel meter (attempt durations, finished messages by outcome, queue wait, lifecycle, gauges).
 *
 * @module @flowing/otel
 */
export { type InstrumentHandle, type InstrumentOptions, instrument, type OtelLoop } from './instrument.js'
export { GAUGE_STATES, type MeteredLoop } from './metrics.js'
