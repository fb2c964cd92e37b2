/**
 * The options of `on()` and `route()`, checked before anything is registered (I7): known keys, and
 * the per-type deadline, heartbeat, compensation hook, payload check, retry policy, breaker and rate
 * limits, resolved into what the registry keeps per type.
 *
 * @module
 */
import type { Rename } from '@flowing/errors'
import type { CircuitPolicy } from '../contracts/failures.js'
import type { RateRule } from '../contracts/flow.js'
import type { RetryOptions } from '../contracts/retry.js'
import { InvalidArgumentError } from '../errors.js'
import { checkCircuitOptions } from '../failure/circuit-policy.js'
import { checkRetryOptions } from '../failure/retry-policy.js'
import * as check from '../internal/validate.js'
import { checkRateLimits } from '../limits/rate-limit.js'
import type { RegisterOptions } from './handler.js'

const NO_RULES: readonly RateRule[] = []

/** What a type's registration options resolve to. */
export interface Extras {
  readonly timeoutMs: number | undefined
  readonly compensate: RegisterOptions['compensate']
  /** Checks each payload at post time (the option, or the handler's own `checkPayload`). */
  readonly checkPayload: ((payload: unknown) => void) | undefined
  readonly heartbeatMs: number | undefined
  readonly retry: RetryOptions | undefined
  readonly breaker: CircuitPolicy | false | undefined
  readonly rateLimits: readonly RateRule[]
  readonly maxCrashes: number | undefined
}

/** The keys `on()` / `route()` options may have. */
const REGISTER_KEYS: readonly (keyof RegisterOptions)[] = [
  'replace',
  'timeoutMs',
  'heartbeatMs',
  'compensate',
  'checkPayload',
  'retry',
  'circuitBreaker',
  'rateLimit',
  'maxCrashes',
]

/** Registration options that were renamed (the old names still work, with a `DeprecationWarning`). */
const REGISTER_RENAMES: readonly Rename[] = [{ from: 'breaker', to: 'circuitBreaker', code: 'FLOWING_DEP_ON_BREAKER' }]

// Registration options, strictly: an object (read once, see snapshotOptions) with known keys only.
export function registerOptions(options: unknown): RegisterOptions | undefined {
  if (options === undefined) return undefined
  const o = check.renamed('options', check.snapshotOptions('options', options), REGISTER_RENAMES)
  check.checkKnownKeys('options', o, REGISTER_KEYS)
  const { replace } = o as { readonly replace?: unknown }
  if (replace !== undefined) check.boolean('options.replace', replace)
  return o as RegisterOptions
}

/** Resolves and checks the per-type options (`handler`: its own `checkPayload`, if any). */
export function extrasOf(options: RegisterOptions | undefined, loopTimeoutMs: number, handler?: unknown): Extras {
  const compensate = optionalFunction('options.compensate', options?.compensate)
  const checkPayload = payloadCheckOf(options, handler)
  const timeoutMs = timeoutOf(options)
  const heartbeatMs = heartbeatOf(options, timeoutMs ?? loopTimeoutMs)
  const retry =
    options?.retry === undefined
      ? undefined
      : check.readably('options.retry', () => checkRetryOptions('options.retry', options.retry), options.retry)
  const given = options?.circuitBreaker
  const breaker =
    given === undefined
      ? undefined
      : check.readably('options.circuitBreaker', () => checkCircuitOptions('options.circuitBreaker', given), given)
  const limit = options?.rateLimit
  const rateLimits =
    limit === undefined
      ? NO_RULES
      : check.readably('options.rateLimit', () => checkRateLimits('options.rateLimit', limit, TYPE_SCOPES), limit)
  const maxCrashes =
    options?.maxCrashes === undefined ? undefined : check.maxCrashes('options.maxCrashes', options.maxCrashes)
  return { timeoutMs, compensate, checkPayload, heartbeatMs, retry, breaker, rateLimits, maxCrashes }
}

function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidArgumentError(name, 'a function', value)
  return value
}

// The option, else the handler's own `checkPayload` (a function a handler factory attached).
function payloadCheckOf(options: RegisterOptions | undefined, handler: unknown): Extras['checkPayload'] {
  const given = optionalFunction('options.checkPayload', options?.checkPayload)
  if (given !== undefined) return given as Extras['checkPayload']
  const own = typeof handler === 'function' ? (handler as { checkPayload?: unknown }).checkPayload : undefined
  return optionalFunction('handler.checkPayload', own) as Extras['checkPayload']
}

const HEARTBEAT_RULE =
  "given only with a finite handler deadline — `options.timeoutMs` here, or the loop's `timeoutMs` " +
  '(without one no deadline is armed, so nothing would ever check the heartbeat)'

// A heartbeat deadline: positive and finite, and under a finite hard deadline (`timeoutMs`: the
// type's, else the loop's), the only thing that arms the watchdog that checks it.
function heartbeatOf(options: RegisterOptions | undefined, timeoutMs: number): number | undefined {
  const heartbeatMs = options?.heartbeatMs
  if (heartbeatMs === undefined) return undefined
  if (!(typeof heartbeatMs === 'number' && heartbeatMs > 0 && Number.isFinite(heartbeatMs))) {
    throw new InvalidArgumentError('options.heartbeatMs', 'a positive finite number of ms', heartbeatMs)
  }
  if (timeoutMs === Number.POSITIVE_INFINITY)
    throw new InvalidArgumentError('options.heartbeatMs', HEARTBEAT_RULE, heartbeatMs)
  return heartbeatMs
}

const TYPE_SCOPES = ['type', 'route', 'key'] as const

function timeoutOf(options: RegisterOptions | undefined): number | undefined {
  const t = options?.timeoutMs
  if (t === undefined) return undefined
  if (typeof t !== 'number' || !(t > 0))
    throw new InvalidArgumentError('options.timeoutMs', 'a positive number of ms or Infinity', t)
  return t
}
