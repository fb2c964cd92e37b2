/**
 * The prom-client metrics of one (registry, prefix): created with the first loop exported there,
 * shared by every loop exported there (each its own `loop` label), removed with the last.
 *
 * @module
 */
import { InvalidArgumentError, type MetricsSnapshot } from '@flowing/core'
import { Gauge, type Metric, type Registry } from 'prom-client'
import { CounterCells, HistogramCells } from './cells.js'

/** What a gauge reads from a loop's metrics snapshot. */
type Read = (m: MetricsSnapshot) => number

/** Pressure levels as numbers, for `pressure_level`. */
export const PRESSURE_LEVELS: Readonly<Record<string, number>> = Object.freeze({
  normal: 0,
  warn: 1,
  shed: 2,
  reject: 3,
})

/**
 * Work accepted and not yet at an outcome: queued (which counts ready, parked, held and backing-off
 * messages: a retry keeps its place in the capacity), delayed, overdue, running.
 */
function backlog(m: MetricsSnapshot): number {
  const g = m.gauges
  return g.queued + g.delayed + g.overdue + g.running
}

// The gauges: name suffix, help, how to read it.
const GAUGES: readonly (readonly [string, string, Read])[] = [
  [
    'backlog',
    'Accepted messages not yet at an outcome, including what waits in memory: queued (ready, parked, held, backing off), delayed, overdue, running',
    backlog,
  ],
  [
    'queued',
    'Messages in the queue: ready, parked behind a busy key, held by an open circuit breaker, backing off before a retry',
    (m) => m.gauges.queued,
  ],
  ['queue_fill_ratio', 'Queued messages / capacity, 0 to 1', (m) => m.gauges.fill],
  ['queue_capacity', 'The bound on queued messages', (m) => m.gauges.capacity],
  ['held', 'Queued messages held by an open circuit breaker', (m) => m.gauges.held],
  ['retrying', 'Of the queued, failed messages backing off before a retry', (m) => m.gauges.retrying],
  ['rate_limited', 'Of the queued, messages waiting for a rate limit', (m) => m.gauges.limited],
  ['grouped', 'Of the queued, messages waiting for room in their key group', (m) => m.gauges.grouped],
  ['gate_closed', 'Whether the resource gate holds dispatch: 1 closed, 0 open', (m) => (m.gauges.gateClosed ? 1 : 0)],
  [
    'delayed',
    'Delayed messages on the timing wheel, not yet due (plus overdue ones waiting for room)',
    (m) => m.gauges.delayed + m.gauges.overdue,
  ],
  ['running', 'Handlers running (busy workers)', (m) => m.gauges.running],
  ['workers', 'Configured workers', (m) => m.gauges.workers],
  ['zombies', 'Timed-out handlers still unsettled after graceMs', (m) => m.gauges.zombies],
  ['waiting_producers', 'Producers blocked in send() waiting for room', (m) => m.gauges.waitingProducers],
  [
    'pressure_level',
    'Backpressure level: 0 normal, 1 warn, 2 shed, 3 reject',
    (m) => PRESSURE_LEVELS[m.gauges.pressure] ?? 0,
  ],
]

/** A source of gauge values: one per exported loop. */
export interface GaugeSource {
  /** The loop's constant labels (`loop` and the user's). */
  readonly labels: Readonly<Record<string, string>>
  /** The loop's metrics, at most one snapshot per scrape. */
  snapshot(): MetricsSnapshot
}

/** The event-driven metrics one loop writes. */
export interface EventMetrics {
  readonly posted: CounterCells
  readonly accepted: CounterCells
  readonly rejected: CounterCells
  readonly processed: CounterCells
  readonly finished: CounterCells
  readonly failed: CounterCells
  readonly retries: CounterCells
  readonly deadLetters: CounterCells
  readonly rateLimited: CounterCells
  readonly queueWait: HistogramCells
  readonly handler: HistogramCells
  readonly lifecycle: HistogramCells
}

/**
 * The metrics of one (registry, prefix) and the loops exported through them.
 * @throws InvalidArgumentError (`options.prefix`) when a metric name is taken in the registry: nothing is registered
 */
export class MetricSet {
  /** Loops by their `loop` label value. */
  readonly sources = new Map<string, GaugeSource>()
  /** The event-driven metrics. */
  readonly events: EventMetrics
  /** The constant label names, in order, that every loop here must use. */
  readonly labelNames: readonly string[]
  /** The histogram buckets every loop here uses. */
  readonly buckets: readonly number[]
  // Everything registered, for removal with the last loop.
  readonly #all: { readonly name: string; readonly metric: CounterCells | HistogramCells | Gauge }[] = []
  readonly #registry: Registry

  constructor(registry: Registry, prefix: string, labelNames: readonly string[], buckets: readonly number[]) {
    this.#registry = registry
    this.labelNames = labelNames
    this.buckets = buckets
    // The label names past the constant ones are documented per metric; the cells take any labels.
    const counter = (name: string, help: string, _labels: readonly string[]) =>
      this.#add(prefix + name, new CounterCells(prefix + name, help))
    const histogram = (name: string, help: string, _labels: readonly string[]) =>
      this.#add(prefix + name, new HistogramCells(prefix + name, help, buckets))
    this.events = {
      posted: counter('posted_total', 'Posts of each message type (accepted + rejected)', ['type']),
      accepted: counter('accepted_total', 'Messages admitted, immediate or delayed', ['type']),
      rejected: counter('rejected_total', 'Posts refused, by error code', ['type', 'reason']),
      processed: counter('processed_total', 'Messages whose handler succeeded (the outcome succeeded)', ['type']),
      finished: counter(
        'finished_total',
        'Messages at their outcome: succeeded, dead_lettered, request_failed, dropped, cancelled, snapshotted',
        ['type', 'outcome'],
      ),
      failed: counter(
        'failed_total',
        'Failed attempts (threw, rejected or timed out), retried or not, by error class',
        ['type', 'error_class'],
      ),
      retries: counter('retries_total', 'Retries scheduled', ['type']),
      deadLetters: counter('dead_letter_total', 'Messages dead-lettered (failed for good)', ['type']),
      rateLimited: counter(
        'rate_limited_total',
        'Times a message waited for a rate limit, by scope (loop, type, route, key, group, retry-after)',
        ['type', 'scope'],
      ),
      queueWait: histogram('queue_wait_seconds', "From entering the queue to the start of the message's last attempt", [
        'type',
      ]),
      handler: histogram('handler_seconds', 'Handler run time per attempt, by result (succeeded, failed)', [
        'type',
        'result',
      ]),
      lifecycle: histogram('lifecycle_seconds', 'From admission to outcome, by outcome', ['type', 'outcome']),
    }
    for (const [name, help, read] of GAUGES) this.#add(prefix + name, this.#gauge(prefix + name, help, read))
    const taken = this.#all.find(({ name }) => registry.getSingleMetric(name) !== undefined)
    if (taken !== undefined) {
      throw new InvalidArgumentError(
        'options.prefix',
        `a prefix whose metric names are free in the registry (\`${taken.name}\` is taken)`,
        prefix,
      )
    }
    for (const { metric } of this.#all) {
      if (metric instanceof Gauge) registry.registerMetric(metric)
      else metric.registerIn(registry)
    }
  }

  /** Removes every metric of the set from its registry (after the last loop left). */
  remove(): void {
    for (const { name, metric } of this.#all) {
      if (this.#registry.getSingleMetric(name) === (metric as unknown as Metric))
        this.#registry.removeSingleMetric(name)
    }
  }

  /** The names of the metrics, in registration order. */
  get names(): string[] {
    return this.#all.map((m) => m.name)
  }

  #add<T extends CounterCells | HistogramCells | Gauge>(name: string, metric: T): T {
    this.#all.push({ name, metric })
    return metric
  }

  // A gauge that, at scrape time, sets one series per exported loop from its snapshot.
  #gauge(name: string, help: string, read: Read): Gauge {
    const sources = this.sources
    return new Gauge({
      name,
      help,
      labelNames: [...this.labelNames],
      registers: [],
      collect() {
        this.reset() // a loop unregistered since the last scrape leaves no series behind
        for (const source of sources.values()) this.set(source.labels, read(source.snapshot()))
      },
    })
  }
}
