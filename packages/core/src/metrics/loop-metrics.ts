/**
 * The loop's numbers: counters, gauges and latency histograms, read with `loop.metrics()`.
 *
 * @module
 */
import type { PressureLevel, WatermarkStats } from '@flowing/backpressure'
import type { HistogramSnapshot } from '../contracts/metrics.js'
import { MAX_PRIORITY } from '../contracts/priority.js'
import type { JournalStats } from '../contracts/store.js'
import { Histogram } from './histogram.js'

/**
 * Monotonic counts since the loop was created. At rest: `posted = accepted + rejected` and
 * `accepted = succeeded + deadLettered + requestFailed + dropped + cancelled + snapshotted`: nothing
 * is lost silently.
 *
 * @group Metrics
 */
export interface LoopCounters {
  /** Every call to `post`, `tryPost`, `send` and `ctx.post`. */
  readonly posted: number
  /** Admitted messages (including ones `drop-new` dropped at once). */
  readonly accepted: number
  /** Refused posts (full, stopped, bad input, timed-out or aborted `send`). */
  readonly rejected: number
  /** Messages whose handler returned or resolved (an outcome). */
  readonly succeeded: number
  /** Messages that failed for good: non-retryable, or out of attempts (an outcome). */
  readonly deadLettered: number
  /**
   * Requests (`loop.request()`) whose handler failed for good, the error handed to the caller (its
   * promise rejected with it) instead of a dead letter (an outcome).
   */
  readonly requestFailed: number
  /** Failed attempts (threw, rejected or timed out), retried or not: not an outcome. */
  readonly failed: number
  /** Retries scheduled. */
  readonly retried: number
  /** Times a message was held by an open circuit breaker. */
  readonly held: number
  /** Dead-letter alerts sent. */
  readonly alerts: number
  /** Messages handed back unfinished in a shutdown snapshot (an outcome). */
  readonly snapshotted: number
  /** Messages re-admitted from a snapshot (`restore`; also counted in `posted` and `accepted`). */
  readonly restored: number
  /** Posts refused as duplicates of an idempotency key (also counted in `rejected`). */
  readonly duplicates: number
  /** Messages dropped by an overflow policy. */
  readonly dropped: number
  /** Messages cancelled: by `stop({ drain: false })`, or delayed ones by their handle or `stop()`. */
  readonly cancelled: number
  /** Of the failed attempts, handlers that missed their deadline (`timeoutMs`). */
  readonly timedOut: number
  /** Timed-out handlers that settled afterwards: swallowed, counted once, never a second outcome. */
  readonly lateCompletions: number
  /** Effects a timed-out handler tried through `ctx` after losing the race (refused with `FencedError`). */
  readonly fenced: number
  /** Times a message had to wait for a rate limit (a budget, or a `RateLimitError`'s retry-after). */
  readonly rateLimited: number
  /** Of those, handlers that threw `RateLimitError` (no attempt consumed). */
  readonly retryAfters: number
}

/**
 * Point-in-time levels.
 *
 * @group Metrics
 */
export interface LoopGauges {
  /** Waiting messages: ready, parked behind a busy key, held by a breaker, backing off before a retry. */
  readonly queued: number
  /** Of those, waiting behind a busy key. */
  readonly parked: number
  /** Handlers running (= busy workers). */
  readonly running: number
  /** Configured workers. */
  readonly workers: number
  /** Keys with a running message. */
  readonly busyKeys: number
  /** Timed-out handlers still unsettled after `graceMs`. */
  readonly zombies: number
  /** Watermark backpressure level (`normal` when backpressure is off). */
  readonly pressure: PressureLevel
  /** Delayed messages scheduled on the timing wheel, not yet due. */
  readonly delayed: number
  /** Delayed messages due while the queue was full, waiting outside it to enter first. */
  readonly overdue: number
  /** Failed messages backing off before a retry (or due and waiting for room). */
  readonly retrying: number
  /** Of the queued, messages held by open circuit breakers or by a paused type (`loop.controls.pauseType`). */
  readonly held: number
  /** Letters in the in-memory dead-letter store. */
  readonly deadLetters: number
  /** `queued / capacity`, 0–1. */
  readonly fill: number
  /** The capacity. */
  readonly capacity: number
  /** Producers blocked in `send()`. */
  readonly waitingProducers: number
  /** Of the queued, messages waiting for a rate limit. */
  readonly limited: number
  /** Of the queued, messages waiting for room in their key group. */
  readonly grouped: number
  /** Whether the resource gate (`gate` option) holds dispatch now. */
  readonly gateClosed: boolean
}

/**
 * What `loop.metrics()` returns. Plain data, safe to serialize.
 *
 * @group Metrics
 */
export interface MetricsSnapshot {
  /** Monotonic counts. */
  readonly counters: LoopCounters
  /** Current levels. */
  readonly gauges: LoopGauges
  /** Time from admission to handler start, all priorities (ms). */
  readonly queueWait: HistogramSnapshot
  /** Queue wait per priority level 0–9 (ms): shows what aging buys the low levels. */
  readonly queueWaitByPriority: readonly HistogramSnapshot[]
  /** Handler run time, successes and failures (ms). */
  readonly handlerTime: HistogramSnapshot
  /** Watermark backpressure: time per level, transitions, decisions per level (`undefined` when off). */
  readonly backpressure: WatermarkStats | undefined
  /** The journal store: rows, pending changes, commits and their time (`undefined` without a store). */
  readonly journal: JournalStats | undefined
}

/** Mutable counters and histograms; the loop writes, `snapshot()` reads. */
export class LoopMetrics {
  posted = 0
  accepted = 0
  rejected = 0
  succeeded = 0
  deadLettered = 0
  requestFailed = 0
  failed = 0
  retried = 0
  held = 0
  alerts = 0
  snapshotted = 0
  restored = 0
  duplicates = 0
  dropped = 0
  cancelled = 0
  timedOut = 0
  lateCompletions = 0
  fenced = 0
  retryAfters = 0
  // The rate-limit stage's count of holds, read at snapshot time.
  rateLimitHolds: () => number = () => 0
  readonly #waitByPriority: Histogram[] = []
  readonly #handlerTime = new Histogram()

  constructor() {
    for (let p = 0; p <= MAX_PRIORITY; p++) this.#waitByPriority.push(new Histogram())
  }

  /** Records a start: how long the message waited. */
  recordWait(priority: number, ms: number): void {
    ;(this.#waitByPriority[priority] as Histogram).record(ms)
  }

  /** Records a handler's run time. */
  recordHandler(ms: number): void {
    this.#handlerTime.record(ms)
  }

  /** A consistent copy of everything. */
  snapshot(
    gauges: LoopGauges,
    backpressure: WatermarkStats | undefined,
    journal: JournalStats | undefined,
  ): MetricsSnapshot {
    const { posted, accepted, rejected, succeeded, deadLettered, failed, retried, held, alerts } = this
    const { dropped, cancelled, timedOut, lateCompletions, fenced, snapshotted, restored, duplicates } = this
    return {
      counters: {
        posted,
        accepted,
        rejected,
        succeeded,
        deadLettered,
        requestFailed: this.requestFailed,
        failed,
        retried,
        held,
        alerts,
        snapshotted,
        restored,
        duplicates,
        dropped,
        cancelled,
        timedOut,
        lateCompletions,
        fenced,
        rateLimited: this.rateLimitHolds(),
        retryAfters: this.retryAfters,
      },
      gauges,
      queueWait: Histogram.combinedSnapshot(this.#waitByPriority),
      queueWaitByPriority: this.#waitByPriority.map((h) => h.snapshot()),
      handlerTime: this.#handlerTime.snapshot(),
      backpressure,
      journal,
    }
  }
}
