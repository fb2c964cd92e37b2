/**
 * Loop options, their defaults and their validation.
 *
 * @module
 */
import type { Rename } from '@flowing/errors'
import { nanoid } from 'nanoid'
import { checkBackpressure } from '../admission/pressure.js'
import { systemClock } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { AlertOptions, CircuitPolicy, Classifier, FailureLogger } from '../contracts/failures.js'
import type { IdempotencyOptions } from '../contracts/idempotency.js'
import type { OverflowPolicy } from '../contracts/message.js'
import type {
  BackpressureOptions,
  FailureExitOptions,
  LoopOptions,
  ResolvedLoopOptions,
  StallOptions,
} from '../contracts/options.js'
import type { MessageLogger } from '../contracts/outcomes.js'
import type { ResolvedAutoscale } from '../contracts/pool.js'
import { Priority, type PriorityLevel } from '../contracts/priority.js'
import type { RetryOptions } from '../contracts/retry.js'
import type { Store } from '../contracts/store.js'
import { InvalidArgumentError } from '../errors.js'
import { checkCircuitOptions } from '../failure/circuit-policy.js'
import { checkRetryOptions, mergeRetry } from '../failure/retry-policy.js'
import * as check from '../internal/validate.js'
import { FLOW_OPTION_KEYS, resolveFlowOptions } from '../limits/flow-options.js'
import { checkWorkers } from '../pool/autoscale-options.js'
import {
  checkAlerts,
  checkDeadLetters,
  checkFailureExit,
  checkIdempotency,
  checkLogger,
  checkMessageLog,
  checkStore,
} from './checks.js'
import { checkStall } from './stall.js'

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
  'maxCrashes',
  ...FLOW_OPTION_KEYS,
]

/** The options that were renamed: the old names still work, with a `DeprecationWarning`. */
const RENAMES: readonly Rename[] = [{ from: 'breaker', to: 'circuitBreaker', code: 'FLOWING_DEP_BREAKER' }]

/** The overflow policies, for validation and docs. @group Messages */
export const OVERFLOW_POLICIES: readonly OverflowPolicy[] = ['reject', 'drop-new', 'drop-oldest-lowest', 'wait']

/**
 * Validates `options` and applies defaults. A throwing getter or Proxy trap nested in an option group
 * becomes an InvalidArgumentError naming it (`pick`).
 * @throws InvalidArgumentError naming the first bad option
 */
export function resolveOptions(options: LoopOptions | undefined): ResolvedLoopOptions {
  const o = options === undefined ? {} : check.renamed('options', check.snapshotOptions('options', options), RENAMES)
  check.knownKeys('options', o, LOOP_OPTION_KEYS)
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
    maxCrashes: pick('maxCrashes', 3, check.maxCrashes),
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
