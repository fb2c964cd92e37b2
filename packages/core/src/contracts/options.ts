/**
 * The loop's options as users write them ({@link LoopOptions}) and as the stages read them once
 * defaults are applied ({@link ResolvedLoopOptions}): a contract leaf, validated elsewhere.
 *
 * @module
 */
import type { WatermarkControllerOptions } from '@flowing/backpressure'
import type { Rename } from '@flowing/errors'
import type { Clock } from './clock.js'
import type {
  AlertOptions,
  CircuitBreakerOptions,
  CircuitPolicy,
  Classifier,
  DeadLetterSink,
  FailureExitReport,
  FailureLogger,
} from './failures.js'
import type { FlowControlOptions, ResolvedFlowOptions } from './flow.js'
import type { IdempotencyOptions } from './idempotency.js'
import type { OverflowPolicy } from './message.js'
import type { MessageLogger } from './outcomes.js'
import type { AutoscaleOptions, ResolvedAutoscale } from './pool.js'
import type { PriorityLevel } from './priority.js'
import type { RetryOptions } from './retry.js'
import type { LoopSnapshot } from './snapshot.js'
import type { DurabilityOptions, Store } from './store.js'

/** Options of `createLoop()`. Every option is optional and validated; unknown keys are rejected. @group Loop */
export interface LoopOptions extends FlowControlOptions, DurabilityOptions {
  /**
   * Bound on waiting messages (ready, parked behind a busy key, held by a breaker, backing off before
   * a retry). Running messages do not count.
   * @defaultValue 10_000
   */
  readonly capacity?: number
  /**
   * Logical workers: how many handlers may run at once (in-process concurrency) — a count, or a range
   * `{ min, max, … }` that the autoscaler moves within ({@link AutoscaleOptions}; `workers` events).
   * @defaultValue 8
   */
  readonly workers?: number | AutoscaleOptions
  /**
   * Bound on producers blocked in `send()`; one more is refused at once with `QueueFullError`, so
   * memory stays bounded even when producers outrun consumers.
   * @defaultValue 10_000
   */
  readonly maxWaiting?: number
  /**
   * Bound on delayed messages pending (`postDelayed` / `postAt`, not yet in the queue); one more is
   * refused with `DelayedFullError`. The timing wheel costs ~30 B per pending timer.
   * @defaultValue 1_000_000
   */
  readonly maxDelayed?: number
  /**
   * Handler deadline (ms) for every type without its own (`on(type, handler, { timeoutMs })`). On
   * timeout the worker slot is freed at once, the message fails with `HandlerTimeoutError`,
   * `ctx.signal` aborts, and the handler's later effects through `ctx` are fenced (`FencedError`).
   * `Infinity`: no deadline (no watchdog cost per message).
   * @defaultValue Infinity
   */
  readonly timeoutMs?: number
  /**
   * How long a timed-out handler may stay unsettled before it counts as a zombie (ms).
   * @defaultValue 5000
   */
  readonly graceMs?: number
  /**
   * Zombies count against the worker budget up to this many (so real concurrency never silently
   * exceeds `workers`); past it the `zombies` event fires and no more slots are held back.
   * @defaultValue the worker count
   */
  readonly maxZombies?: number
  /**
   * Per-type escalation: after `threshold` consecutive timeouts of a type, its posts are refused with
   * `TimeoutBreakerOpenError` for `cooldownMs`, then one probe decides: exactly one post is admitted, the
   * others are refused until the type's next completion (closes) or timeout (reopens), or — a probe
   * that never reports — another `cooldownMs`. `false` to turn it off.
   * @defaultValue `{ threshold: 5, cooldownMs: 30_000 }`
   */
  readonly timeoutBreaker?: false | { readonly threshold?: number; readonly cooldownMs?: number }
  /**
   * Stall detection: `true` for the defaults, or `{ intervalMs, blockedMs, noProgressMs }` — reports an
   * event loop blocked past `blockedMs` (default 200) and no handler finishing for `noProgressMs`
   * (default 30 000) while work waits, as `stall` events listing what runs. Off by default (it keeps a
   * repeating timer). The detector's `onStall`, `timers`, `busy` and `describeRunning` are the loop's:
   * giving one is refused with `InvalidArgumentError` (listen to the `stall` event instead).
   * @defaultValue false
   */
  readonly stall?: boolean | StallOptions
  /**
   * Watermark backpressure (`@flowing/backpressure`): `true` for the defaults (warn 60 %, shed 80 %,
   * reject 95 %, exits 50 / 70 / 85 %, an admission breaker), or its options. Off by default: the
   * overflow policy alone decides at capacity. A bad option is an `InvalidArgumentError` naming
   * `options.backpressure.*`; the controller's `now` and `onTransition` are the loop's and are refused
   * (the time is the `clock` option; listen to the `backpressure` event).
   * @defaultValue false
   * @example
   * ```ts
   * const loop = createLoop({ capacity: 1000, backpressure: { shed: { enter: 0.75, exit: 0.6 }, shedAbove: 1 } })
   * loop.events.on('backpressure', (t) => console.log(`${t.from} → ${t.to}`))
   * ```
   */
  readonly backpressure?: boolean | BackpressureOptions
  /**
   * What a post does when the queue is full: `reject` (throw `QueueFullError` / result `full`),
   * `drop-new` (drop the new message, event `dropped`), `drop-oldest-lowest` (evict the oldest message
   * of the least urgent level if it is not more urgent than the new one, else drop the new one), or
   * `wait` (`send()` waits for space; a synchronous `post()` still throws `QueueFullError`).
   * @defaultValue 'reject'
   */
  readonly overflow?: OverflowPolicy
  /**
   * Milliseconds of waiting worth one priority level (linear aging). A message is never overtaken by a
   * more urgent one posted `agingMs × Δpriority` or more after it. `Infinity`: strict priority;
   * `0`: FIFO.
   * @defaultValue 1000
   */
  readonly agingMs?: number
  /**
   * Priority of posts that give none.
   * @defaultValue `Priority.normal` (5)
   */
  readonly defaultPriority?: PriorityLevel
  /**
   * Maximum follow-up depth (`ctx.post` inside handlers), against self-amplifying storms.
   * @defaultValue 16
   */
  readonly maxHops?: number
  /**
   * Handler starts per event-loop turn before the loop yields (`setImmediate`) so timers and I/O run
   * even while a deep queue drains.
   * @defaultValue 1024
   */
  readonly dispatchBudget?: number
  /**
   * Milliseconds of handler starts per event-loop turn before the loop yields, whatever the count:
   * keeps CPU-heavy synchronous handlers from holding timers and I/O back for long.
   * @defaultValue 10
   */
  readonly dispatchBudgetMs?: number
  /**
   * Time source and timers; pass a `VirtualClock` in tests.
   * @defaultValue `systemClock`
   */
  readonly clock?: Clock
  /**
   * Start dispatching at once. With `false` the loop accepts posts but runs nothing until `start()`.
   * @defaultValue true
   */
  readonly autoStart?: boolean
  /**
   * The priority structure: `levels` (one FIFO per priority level, O(1)) or `heap` (a heap-js binary
   * heap, O(log n)). Both give the same order; `heap` exists to be measured against.
   * @defaultValue 'levels'
   */
  readonly queue?: 'levels' | 'heap'
  /**
   * Prefix of message ids.
   * @defaultValue a fresh 10-character nanoid per loop
   */
  readonly idPrefix?: string
  /**
   * The retry policy of every type without its own (`on(type, h, { retry })`) and every post without
   * one (`post(…, { retry })`). Retries are opt-in: the default allows one attempt.
   * @defaultValue `{ maxAttempts: 1 }` (back-off when enabled: 100 ms × 2ⁿ, cap 30 s, ±30 % jitter, ordered)
   */
  readonly retry?: RetryOptions
  /**
   * Classifies a failure as `retryable`, `non-retryable` or `unknown`; return `undefined` to fall back
   * to the defaults (`NonRetryableError`, `RetryableError`, `HandlerTimeoutError`, an error's boolean
   * `retryable` property; anything else is `unknown`).
   */
  readonly classify?: Classifier
  /**
   * Circuit breakers that hold messages while a downstream is down: `true` for the defaults, or their
   * options (per type or per route). They report as `circuit` events and `loop.circuits()`. Types can
   * override with `on(type, h, { circuitBreaker })`.
   * @defaultValue false
   */
  readonly circuitBreaker?: boolean | CircuitBreakerOptions
  /**
   * The old name of `circuitBreaker` (same meaning; a `DeprecationWarning` once per process).
   * @deprecated Use `circuitBreaker`.
   */
  readonly breaker?: boolean | CircuitBreakerOptions
  /**
   * The dead-letter store: `maxSize` letters kept in memory (oldest evicted; 0 keeps none) and an
   * optional `sink` that receives every letter (a database, a file).
   * @defaultValue `{ maxSize: 10_000 }`
   */
  readonly deadLetters?: { readonly maxSize?: number; readonly sink?: DeadLetterSink }
  /**
   * De-noised dead-letter alerts: at most one per type per `windowMs`, once `threshold` letters are in
   * the window, with counts and the top error signatures.
   * @defaultValue `{ windowMs: 60_000, threshold: 1, top: 3 }`
   */
  readonly alerts?: AlertOptions
  /**
   * Where a new error signature is logged once when first seen; `false` for nowhere (the `signature`
   * event fires either way).
   * @defaultValue `console`
   */
  readonly logger?: FailureLogger | false
  /**
   * The per-message log: one structured line per finished message — id, type, key, route, trace id,
   * outcome, attempts, queue wait, run time, time in the loop — to a logger with `info` and `warn`
   * (pino's, `console`); `false` for none. Dead-lettered and dropped messages go to `warn`.
   * @defaultValue `false`
   */
  readonly messageLog?: MessageLogger | false
  /**
   * Uniform random numbers in [0, 1) for back-off jitter; inject a seeded one for exact tests.
   * @defaultValue `Math.random`
   */
  readonly random?: () => number
  /**
   * Which messages get a lifecycle trace (`loop.trace(id)`): `failures` — those that failed, were held
   * or retried (the happy path costs nothing) — or `all`.
   * @defaultValue 'failures'
   */
  readonly traces?: 'failures' | 'all'
  /**
   * Finished traces kept readable by `loop.trace(id)`, most recent first.
   * @defaultValue 1000
   */
  readonly keepTraces?: number
  /**
   * The idempotency ledger: its store, TTL, bound, the policy for `failed` keys, and `dedupe: 'id'`.
   * Without this option a ledger is still created (in memory, defaults) when a post first carries an
   * `idempotencyKey`.
   */
  readonly idempotency?: IdempotencyOptions
  /**
   * The failure exit: stop the loop (handing back a snapshot) when the rate of failed attempts in a
   * window reaches `failureRate`, instead of burning the whole backlog into the dead-letter store.
   * @defaultValue false
   */
  readonly failureExit?: false | FailureExitOptions
}

/** Options with defaults applied. */
export type ResolvedLoopOptions = Required<
  Omit<
    LoopOptions,
    | 'classify'
    | 'breaker'
    | 'circuitBreaker'
    | 'deadLetters'
    | 'alerts'
    | 'logger'
    | 'idempotency'
    | 'store'
    | 'workers'
    | keyof FlowControlOptions
  >
> &
  ResolvedFlowOptions & {
    // The initial count; with a range, `autoscale` holds it.
    readonly workers: number
    readonly autoscale: ResolvedAutoscale | undefined
    readonly store: Store | undefined
    readonly idempotency: IdempotencyOptions | undefined
    readonly classify: Classifier | undefined
    readonly circuitBreaker: CircuitPolicy | false
    readonly deadLetters: ResolvedDeadLetters
    readonly alerts: AlertOptions
    readonly logger: FailureLogger | false
  }

/**
 * Options of the loop's `backpressure`: the controller's marks, dwell, retry hint bound and breaker
 * (see `@flowing/backpressure`), plus the shed threshold.
 *
 * @remarks The loop supplies the controller's clock and transition callback, so `now` and
 * `onTransition` are refused with an `InvalidArgumentError` rather than silently replaced: the time is
 * the loop's `clock` option, and each transition is the loop's `backpressure` event
 * (`loop.events.on('backpressure', (t) => …)`, where a throwing listener cannot disturb the others).
 *
 * @group Backpressure
 */
export interface BackpressureOptions extends Omit<WatermarkControllerOptions, 'now' | 'onTransition'> {
  /**
   * At level `shed`, posts with a priority number above this (less urgent) are refused.
   * @defaultValue `Priority.high` (2): critical and high pass, normal and below are shed
   */
  readonly shedAbove?: PriorityLevel
}

/**
 * Settings of the loop's stall detector (`@flowing/watchdog`'s `StallDetector`).
 *
 * @remarks The loop supplies the detector's `timers` (its `clock` option), `busy` (work is queued),
 * `describeRunning` (its running attempts) and `onStall` (its `stall` event: listen with
 * `loop.events.on('stall', (report) => …)`). Giving any of them is refused with an
 * `InvalidArgumentError` rather than silently replaced.
 *
 * @group Timeouts and stalls
 */
export interface StallOptions {
  /**
   * Period of the check (ms, > 0).
   * @defaultValue 100
   */
  readonly intervalMs?: number
  /**
   * A check running this much later than planned reports `blocked` (ms, > 0).
   * @defaultValue 200
   */
  readonly blockedMs?: number
  /**
   * No handler finishing for this long while work waits reports `no-progress` (ms, > 0).
   * @defaultValue 30_000
   */
  readonly noProgressMs?: number
}

/** The `deadLetters` option with its default size. */
export interface ResolvedDeadLetters {
  readonly maxSize: number
  readonly sink: DeadLetterSink | undefined
}
/**
 * Options of the `failureExit` loop option: the loop's failure exit.
 *
 * @group Failure handling
 * @category Failure exit
 */

export interface FailureExitOptions {
  /** Failed attempts / ended attempts in the window at or above which the loop stops, in (0, 1]. */
  readonly failureRate: number
  /**
   * The window (ms).
   * @defaultValue 10_000
   */
  readonly windowMs?: number
  /**
   * Attempts that must have ended in the window before the rate counts.
   * @defaultValue 20
   */
  readonly minVolume?: number
  /**
   * The stop's deadline (ms): running handlers get this long, then everything left is handed back.
   * @defaultValue 0
   */
  readonly deadlineMs?: number
  /** Receives the shutdown snapshot (write it somewhere durable; `loop.restore()` it after the fix). */
  readonly onSnapshot?: (snapshot: LoopSnapshot, report: FailureExitReport) => unknown
}
