/**
 * Loop options, their defaults and their validation.
 *
 * @module
 */
import { nanoid } from 'nanoid'
import { type Clock, systemClock } from '../clock.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'
import type { OverflowPolicy } from '../message.js'
import { Priority, type PriorityLevel } from '../priority.js'
import { type BackpressureOptions, checkBackpressure } from './pressure.js'

/** Options of `createLoop()`. Every option is optional and validated; unknown keys are rejected. */
export interface LoopOptions {
  /**
   * Bound on waiting messages (ready, parked behind a busy key). Running messages do not count.
   * @defaultValue 10_000
   */
  readonly capacity?: number
  /**
   * Logical workers: how many handlers may run at once (in-process concurrency).
   * @defaultValue 8
   */
  readonly workers?: number
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
   * `CircuitOpenError` for `cooldownMs`, then one probe decides. `false` to turn it off.
   * @defaultValue `{ threshold: 5, cooldownMs: 30_000 }`
   */
  readonly timeoutBreaker?: false | { readonly threshold?: number; readonly cooldownMs?: number }
  /**
   * Stall detection: `true` for the defaults, or `{ intervalMs, blockedMs, noProgressMs }` — reports an
   * event loop blocked past `blockedMs` (default 200) and no handler finishing for `noProgressMs`
   * (default 30 000) while work waits, as `stall` events listing what runs. Off by default (it keeps a
   * repeating timer).
   * @defaultValue false
   */
  readonly stall?:
    | boolean
    | { readonly intervalMs?: number; readonly blockedMs?: number; readonly noProgressMs?: number }
  /**
   * Watermark backpressure (`@flowing/backpressure`): `true` for the defaults (warn 60 %, shed 80 %,
   * reject 95 %, exits 50 / 70 / 85 %, an admission breaker), or its options. Off by default: the
   * overflow policy alone decides at capacity.
   * @defaultValue false
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
}

/** Options with defaults applied. */
export type ResolvedLoopOptions = Required<LoopOptions>

const KNOWN: readonly (keyof LoopOptions)[] = [
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
]

/** The overflow policies, for validation and docs. */
export const OVERFLOW_POLICIES: readonly OverflowPolicy[] = ['reject', 'drop-new', 'drop-oldest-lowest', 'wait']

/**
 * Validates `options` and applies defaults.
 * @throws InvalidArgumentError naming the first bad option
 */
export function resolveOptions(options: LoopOptions | undefined): ResolvedLoopOptions {
  const o = options === undefined ? {} : check.plainObject('options', options)
  check.knownKeys('options', o, KNOWN)
  const pick = <T>(key: keyof LoopOptions, fallback: T, validate: (name: string, v: unknown) => T): T =>
    o[key] === undefined ? fallback : validate(`options.${key}`, o[key])
  const resolved: ResolvedLoopOptions = {
    capacity: pick('capacity', 10_000, (n, v) => check.positiveInteger(n, v, 2 ** 30)),
    workers: pick('workers', 8, (n, v) => check.positiveInteger(n, v, 65_536)),
    maxWaiting: pick('maxWaiting', 10_000, (n, v) => check.positiveInteger(n, v, 2 ** 30)),
    maxDelayed: pick('maxDelayed', 1_000_000, (n, v) => check.positiveInteger(n, v, 16_000_000)),
    timeoutMs: pick('timeoutMs', Number.POSITIVE_INFINITY, (n, v) => {
      if (typeof v !== 'number' || !(v > 0)) throw new InvalidArgumentError(n, 'a positive number of ms or Infinity', v)
      return v
    }),
    graceMs: pick('graceMs', 5000, (n, v) => check.nonNegativeNumber(n, v, true)),
    timeoutBreaker: pick('timeoutBreaker', {} as LoopOptions['timeoutBreaker'] & {}, (n, v) => {
      if (v === false) return false
      check.knownKeys(n, check.plainObject(n, v), ['threshold', 'cooldownMs'])
      const b = v as { readonly threshold?: unknown; readonly cooldownMs?: unknown }
      if (b.threshold !== undefined) check.positiveInteger(`${n}.threshold`, b.threshold)
      if (b.cooldownMs !== undefined) check.nonNegativeNumber(`${n}.cooldownMs`, b.cooldownMs, false)
      return v as Exclude<LoopOptions['timeoutBreaker'], undefined>
    }),
    maxZombies: pick('maxZombies', -1, check.nonNegativeInteger), // -1: resolved to `workers` below
    stall: pick('stall', false as LoopOptions['stall'] & {}, (n, v) => {
      if (typeof v === 'boolean') return v
      check.plainObject(n, v)
      return v as Exclude<LoopOptions['stall'], undefined>
    }),
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
    autoStart: pick('autoStart', true, check.boolean),
    queue: pick('queue', 'levels' as const, (n, v) => check.oneOf(n, v, ['levels', 'heap'] as const)),
    idPrefix: pick('idPrefix', nanoid(10), (n, v) => {
      if (typeof v !== 'string' || v.length === 0) throw new InvalidArgumentError(n, 'a non-empty string', v)
      return v
    }),
  }
  return resolved.maxZombies >= 0 ? resolved : { ...resolved, maxZombies: resolved.workers }
}

function checkClock(name: string, value: unknown): Clock {
  const c = check.plainObject(name, value)
  for (const fn of ['now', 'setTimeout', 'clearTimeout', 'setImmediate']) {
    if (typeof c[fn] !== 'function') throw new InvalidArgumentError(`${name}.${fn}`, 'a function', c[fn])
  }
  return value as Clock
}
