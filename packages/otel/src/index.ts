/**
 * OpenTelemetry tracing for a Flowing loop: one `CONSUMER` span per attempt, with the producer's trace
 * context carried in the message's headers (W3C `traceparent` / `tracestate`).
 *
 * @module @flowing/otel
 */
export { type InstrumentHandle, type InstrumentOptions, instrument, type OtelLoop } from './instrument.js'
