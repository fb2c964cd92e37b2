/**
 * Loop options, their defaults and their validation.
 *
 * @module
 */
import type { Rename } from '@flowing/errors'
import { nanoid } from 'nanoid'
import { type BackpressureOptions, checkBackpressure } from '../admission/pressure.js'
import { type Clock, systemClock } from '../clock.js'
import type { MessageLogger } from '../engine/finished.js'
import { InvalidArgumentError } from '../errors.js'
import type { AlertOptions } from '../failure/alerts.js'
import { type CircuitBreakerOptions, type CircuitPolicy, checkCircuitOptions } from '../failure/circuits.js'
import type { Classifier } from '../failure/classify.js'
import type { DeadLetterSink } from '../failure/dead-letters.js'
import type { FailureExitOptions, FailureLogger } from '../failure/failure-types.js'
import { checkRetryOptions, mergeRetry, type RetryOptions } from '../failure/retry-policy.js'
import type { IdempotencyOptions } from '../idempotency/ledger.js'
import * as check from '../internal/validate.js'
import type { Store } from '../journal/store.js'
import {
  FLOW_OPTION_KEYS,
  type FlowControlOptions,
  type ResolvedFlowOptions,
  resolveFlowOptions,
} from '../limits/flow-options.js'
import type { OverflowPolicy } from '../message.js'
import { type AutoscaleOptions, checkWorkers, type ResolvedAutoscale } from '../pool/autoscale-options.js'
import { Priority, type PriorityLevel } from '../priority.js'
import {
  checkAlerts,
  checkDeadLetters,
  checkFailureExit,
  checkIdempotency,
  checkLogger,
  checkMessageLog,
  checkStore,
  type ResolvedDeadLetters,
} from './option-checks.js'
import { checkStall, type StallOptions } from './stall-option.js'

/** Options of `createLoop()`. Every option is optional and validated; unknown keys are rejected. @group Loop */
export interface LoopOptions extends FlowControlOptions {
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
  /**
   * A journal (`sqliteStore()` of `@flowing/sqlite`, `postgresStore()` of `@flowing/postgres`): every
   * accepted message is committed to it within one event-loop turn, and `start()` recovers what a
   * crashed or stopped predecessor left there. A loop with a store starts only when told (`autoStart`
   * must not be `true`) and accepts posts from `start()` on, after what it recovered. A fixed `idPrefix`
   * gets a per-process suffix (`orders.x1Yz2Q`), so no id repeats across restarts.
   */
  readonly store?: Store
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

/** Every option name `createLoop()` knows (unknown ones are refused). */
export const LOOP_OPTION_KEYS: readonly (keyof LoopOptions)[] = [
  'capacity',
  'workers',
  'maxWaiting',
  'backpressure',
  'timeoutMs',
  'maxZombies',
  'timeoutBreaker',
  'stall',
  'graceMs',
  'maxDelayed',
  'overflow',
  'agingMs',
  'defaultPriority',
  'maxHops',
  'dispatchBudget',
  'dispatchBudgetMs',
  'clock',
  'autoStart',
  'queue',
  'idPrefix',
  'retry',
  'classify',
  'circuitBreaker',
  'deadLetters',
  'alerts',
  'logger',
  'messageLog',
  'random',
  'traces',
  'keepTraces',
  'idempotency',
  'failureExit',
  'store',
  ...FLOW_OPTION_KEYS,
]

/** The options that were renamed: the old names still work, with a `DeprecationWarning`. */
const RENAMES: readonly Rename[] = [{ from: 'breaker', to: 'circuitBreaker', code: 'FLOWING_DEP_BREAKER' }]

/** The overflow policies, for validation and docs. @group Messages */
export const OVERFLOW_POLICIES: readonly OverflowPolicy[] = ['reject', 'drop-new', 'drop-oldest-lowest', 'wait']

/**
 * Validates `options` and applies defaults.
 * @throws InvalidArgumentError naming the first bad option
 */
export function resolveOptions(options: LoopOptions | undefined): ResolvedLoopOptions {
  const o = options === undefined ? {} : check.renamed('options', check.snapshotOptions('options', options), RENAMES)
  check.knownKeys('options', o, LOOP_OPTION_KEYS)
  // A throwing getter or Proxy trap nested in an option group becomes an InvalidArgumentError naming it.
  const pick = <T>(key: keyof LoopOptions, fallback: T, validate: (name: string, v: unknown) => T): T =>
    o[key] === undefined ? fallback : check.readably(`options.${key}`, () => validate(`options.${key}`, o[key]), o[key])
  const resolved: ResolvedLoopOptions = {
    capacity: pick('capacity', 10_000, (n, v) => check.positiveInteger(n, v, 2 ** 30)),
    ...workerOptions(pick('workers', 8 as number | ResolvedAutoscale, checkWorkers)),
    maxWaiting: pick('maxWaiting', 10_000, (n, v) => check.positiveInteger(n, v, 2 ** 30)),
    maxDelayed: pick('maxDelayed', 1_000_000, (n, v) => check.positiveInteger(n, v, 16_000_000)),
    timeoutMs: pick('timeoutMs', Number.POSITIVE_INFINITY, checkTimeoutMs),
    graceMs: pick('graceMs', 5000, (n, v) => check.nonNegativeNumber(n, v, true)),
    timeoutBreaker: pick('timeoutBreaker', {} as LoopOptions['timeoutBreaker'] & {}, checkTimeoutBreaker),
    maxZombies: pick('maxZombies', -1, check.nonNegativeInteger), // -1: resolved to `workers` below
    stall: pick('stall', false as boolean | StallOptions, checkStall),
    backpressure: pick('backpressure', false as boolean | BackpressureOptions, checkBackpressure),
    overflow: pick('overflow', 'reject' as OverflowPolicy, (n, v) => check.oneOf(n, v, OVERFLOW_POLICIES)),
    agingMs: pick('agingMs', 1000, (n, v) => check.nonNegativeNumber(n, v, true)),
    defaultPriority: pick(
      'defaultPriority',
      Priority.normal as PriorityLevel,
      (n, v) => check.priority(n, v) as PriorityLevel,
    ),
    maxHops: pick('maxHops', 16, check.nonNegativeInteger),
    dispatchBudget: pick('dispatchBudget', 1024, (n, v) => check.positiveInteger(n, v)),
    dispatchBudgetMs: pick('dispatchBudgetMs', 10, (n, v) => check.nonNegativeNumber(n, v, true)),
    clock: pick('clock', systemClock, checkClock),
    autoStart: pick('autoStart', o['store'] === undefined, check.boolean),
    queue: pick('queue', 'levels' as const, (n, v) => check.oneOf(n, v, ['levels', 'heap'] as const)),
    idPrefix: pick('idPrefix', nanoid(10), checkIdPrefix),
    retry: pick('retry', {} as RetryOptions, (n, v) => {
      const retry = checkRetryOptions(n, v)
      mergeRetry(n, retry) // capMs ≥ baseMs once defaults fill the gaps
      return retry
    }),
    classify: pick('classify', undefined as Classifier | undefined, (n, v) => check.fn(n, v) as Classifier),
    circuitBreaker: pick('circuitBreaker', false as CircuitPolicy | false, checkCircuitOptions),
    deadLetters: pick('deadLetters', { maxSize: 10_000, sink: undefined }, checkDeadLetters),
    alerts: pick('alerts', {} as AlertOptions, checkAlerts),
    logger: pick('logger', console as FailureLogger | false, checkLogger),
    messageLog: pick('messageLog', false as MessageLogger | false, checkMessageLog),
    random: pick('random', Math.random, (n, v) => check.fn(n, v) as () => number),
    traces: pick('traces', 'failures' as const, (n, v) => check.oneOf(n, v, ['failures', 'all'] as const)),
    keepTraces: pick('keepTraces', 1000, check.nonNegativeInteger),
    idempotency: pick('idempotency', undefined as IdempotencyOptions | undefined, checkIdempotency),
    failureExit: pick('failureExit', false as false | FailureExitOptions, checkFailureExit),
    store: pick('store', undefined as Store | undefined, checkStore),
    ...resolveFlowOptions(pick),
  }
  return withStore(
    {
      ...resolved,
      maxZombies: resolved.maxZombies >= 0 ? resolved.maxZombies : (resolved.autoscale?.max ?? resolved.workers),
    },
    o,
  )
}

// A loop with a journal starts when told; a fixed id prefix gets a per-process suffix (ids never repeat).
function withStore(r: ResolvedLoopOptions, o: Readonly<Record<string, unknown>>): ResolvedLoopOptions {
  if (r.store === undefined) return r
  const rule = 'false or absent with a `store` (start() recovers the journal first)'
  if (o['autoStart'] === true) throw new InvalidArgumentError('options.autoStart', rule, true)
  return o['idPrefix'] === undefined ? r : { ...r, idPrefix: `${r.idPrefix}.${nanoid(6)}` }
}

function workerOptions(w: number | ResolvedAutoscale): { workers: number; autoscale: ResolvedAutoscale | undefined } {
  return typeof w === 'number' ? { workers: w, autoscale: undefined } : { workers: w.initial, autoscale: w }
}

function checkTimeoutMs(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0)) {
    throw new InvalidArgumentError(name, 'a positive number of ms or Infinity', value)
  }
  return value
}

function checkTimeoutBreaker(name: string, value: unknown): Exclude<LoopOptions['timeoutBreaker'], undefined> {
  if (value === false) return false
  check.knownKeys(name, check.plainObject(name, value), ['threshold', 'cooldownMs'])
  const b = value as { readonly threshold?: unknown; readonly cooldownMs?: unknown }
  if (b.threshold !== undefined) check.positiveInteger(`${name}.threshold`, b.threshold)
  if (b.cooldownMs !== undefined) check.nonNegativeNumber(`${name}.cooldownMs`, b.cooldownMs, false)
  return value as Exclude<LoopOptions['timeoutBreaker'], undefined>
}

function checkIdPrefix(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidArgumentError(name, 'a non-empty string', value)
  return value
}

function checkClock(name: string, value: unknown): Clock {
  const c = check.plainObject(name, value)
  for (const fn of ['now', 'setTimeout', 'clearTimeout', 'setImmediate']) {
    if (typeof c[fn] !== 'function') throw new InvalidArgumentError(`${name}.${fn}`, 'a function', c[fn])
  }
  if (c['wallNow'] !== undefined && typeof c['wallNow'] !== 'function') {
    throw new InvalidArgumentError(`${name}.wallNow`, 'a function (or absent)', c['wallNow'])
  }
  return value as Clock
}
