/**
 * The loop's metrics through an OpenTelemetry meter: attempt durations (`messaging.process.duration`,
 * the semantic-conventions name), finished messages by outcome, queue wait and lifecycle histograms
 * fed by the loop's `finished` event, and the loop's gauges read at each collection.
 *
 * @module
 */
import type { FinishedSummary, Message } from '@flowing/core'
import type { Attributes, Histogram, Meter, ObservableResult } from '@opentelemetry/api'

/**
 * What the metrics need of a loop: its events (`finished`) and its gauges.
 *
 * @group Metrics
 */
export interface MeteredLoop {
  /** The loop's emitter (`Loop.events`). */
  readonly events: {
    on(event: 'finished', fn: (message: Message, summary: FinishedSummary) => void): unknown
    off(event: 'finished', fn: (message: Message, summary: FinishedSummary) => void): unknown
  }
  /** The loop's metrics (`Loop.metrics()`): only the gauges are read. */
  metrics(): { readonly gauges: Readonly<Partial<Record<(typeof GAUGE_STATES)[number], number>>> }
}

/**
 * The gauges reported as `flowing.messages`, by `flowing.state`.
 *
 * @group Metrics
 */
export const GAUGE_STATES = [
  'queued',
  'running',
  'held',
  'limited',
  'grouped',
  'retrying',
  'delayed',
  'overdue',
] as const

/** Seconds buckets from a tenth of a millisecond to a minute. */
const BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60]

/** The recording side: called by the tracing middleware per attempt, by the loop per message. */
export class LoopMeters {
  readonly #process: Histogram
  readonly #finished
  readonly #lifecycle: Histogram
  readonly #wait: Histogram
  readonly #detach: () => void

  /**
   * @param meter - where the instruments are created
   * @param loop - the loop whose events and gauges are read, when it has them
   */
  constructor(meter: Meter, loop: MeteredLoop | undefined) {
    const advice = { explicitBucketBoundaries: BUCKETS }
    this.#process = meter.createHistogram('messaging.process.duration', {
      description: 'Duration of one attempt of a message handler',
      unit: 's',
      advice,
    })
    this.#finished = meter.createCounter('flowing.messages.finished', {
      description: 'Messages that reached their outcome',
      unit: '{message}',
    })
    this.#lifecycle = meter.createHistogram('flowing.message.lifecycle', {
      description: 'From entering the queue to the outcome, retries and back-offs included',
      unit: 's',
      advice,
    })
    this.#wait = meter.createHistogram('flowing.message.queue_wait', {
      description: "From entering the queue to the start of the message's last attempt",
      unit: 's',
      advice,
    })
    this.#detach = loop === undefined ? () => {} : this.#attach(meter, loop)
  }

  /** Records one attempt's duration; `errorType` when it failed. */
  attempt(type: string, seconds: number, errorType: string | undefined): void {
    const attrs: Attributes = { 'messaging.system': 'flowing', 'messaging.operation.name': 'process' }
    attrs['messaging.destination.name'] = type
    if (errorType !== undefined) attrs['error.type'] = errorType
    this.#process.record(seconds, attrs)
  }

  /** Stops reading the loop (the instruments stay, with what they recorded). */
  close(): void {
    this.#detach()
  }

  #attach(meter: Meter, loop: MeteredLoop): () => void {
    const onFinished = (message: Message, summary: FinishedSummary) => {
      const attrs = { 'messaging.destination.name': message.type, 'flowing.outcome': summary.outcome }
      this.#finished.add(1, attrs)
      this.#lifecycle.record(summary.lifecycleMs / 1000, attrs)
      if (summary.waitMs !== undefined) {
        this.#wait.record(summary.waitMs / 1000, { 'messaging.destination.name': message.type })
      }
    }
    loop.events.on('finished', onFinished)
    const gauge = meter.createObservableGauge('flowing.messages', {
      description:
        'Messages in the loop now, by state (queued, running, held, limited, grouped, retrying, delayed, overdue)',
      unit: '{message}',
    })
    const observe = (result: ObservableResult) => {
      const gauges = loop.metrics().gauges
      for (const state of GAUGE_STATES) result.observe(gauges[state] ?? 0, { 'flowing.state': state })
    }
    gauge.addCallback(observe)
    return () => {
      loop.events.off('finished', onFinished)
      gauge.removeCallback(observe)
    }
  }
}

/** The `error.type` of a failure: the error's code, else its name, else `_OTHER`. */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    try {
      const { code, name } = error as { code?: unknown; name?: unknown }
      if (typeof code === 'string' && code !== '') return code
      if (typeof name === 'string' && name !== '') return name
    } catch {
      // a hostile getter: fall through
    }
  }
  return '_OTHER'
}
