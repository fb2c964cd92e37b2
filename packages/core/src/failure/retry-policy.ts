/**
 * Retry policies: how many attempts, and how long to back off between them (exponential, capped,
 * jittered). Resolved per message from the post's, the type's and the loop's options.
 *
 * @module
 */

import type { ErrorClass } from '../contracts/failures.js'
import type { RetryOptions } from '../contracts/retry.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

/**
 * A policy with every field set.
 *
 * @group Failure handling
 * @category Retries
 */
export type RetryPolicy = Required<RetryOptions>

/**
 * The defaults: no retries (opt in per loop, type or post), and when enabled an exponential back-off
 * from 100 ms, doubling up to 30 s, with 30 % proportional jitter.
 *
 * @group Failure handling
 * @category Retries
 */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 1,
  unknownMaxAttempts: 1,
  baseMs: 100,
  factor: 2,
  capMs: 30_000,
  jitter: 0.3,
  jitterStrategy: 'proportional',
  order: 'ordered',
}

const KEYS: readonly (keyof RetryOptions)[] = [
  'maxAttempts',
  'unknownMaxAttempts',
  'baseMs',
  'factor',
  'capMs',
  'jitter',
  'jitterStrategy',
  'order',
]

/**
 * Validates a partial policy (each field on its own; `capMs ≥ baseMs` is checked once merged).
 * @throws InvalidArgumentError naming the field and the rule
 */
export function checkRetryOptions(name: string, value: unknown): RetryOptions {
  const raw = check.plainObject(name, value)
  check.knownKeys(name, raw, KEYS)
  const o = raw as { readonly [K in keyof RetryOptions]?: unknown }
  if (o.maxAttempts !== undefined) check.positiveInteger(`${name}.maxAttempts`, o.maxAttempts, 1_000_000)
  if (o.unknownMaxAttempts !== undefined) {
    check.positiveInteger(`${name}.unknownMaxAttempts`, o.unknownMaxAttempts, 1_000_000)
  }
  if (o.baseMs !== undefined) check.nonNegativeNumber(`${name}.baseMs`, o.baseMs, false)
  if (o.capMs !== undefined) check.nonNegativeNumber(`${name}.capMs`, o.capMs, false)
  if (o.factor !== undefined && !(typeof o.factor === 'number' && o.factor >= 1 && Number.isFinite(o.factor))) {
    throw new InvalidArgumentError(`${name}.factor`, 'a finite number ≥ 1', o.factor)
  }
  if (o.jitter !== undefined && !(typeof o.jitter === 'number' && o.jitter >= 0 && o.jitter <= 1)) {
    throw new InvalidArgumentError(`${name}.jitter`, 'a number in [0, 1]', o.jitter)
  }
  if (o.jitterStrategy !== undefined) {
    check.oneOf(`${name}.jitterStrategy`, o.jitterStrategy, ['proportional', 'full', 'decorrelated'] as const)
  }
  if (o.order !== undefined) check.oneOf(`${name}.order`, o.order, ['ordered', 'unordered'] as const)
  if (o.baseMs !== undefined && o.capMs !== undefined) checkCap(name, o as RetryOptions)
  return o as RetryOptions
}

/**
 * Layers partial policies (most specific first) over the defaults.
 * @throws InvalidArgumentError when the merged `capMs` is below `baseMs`
 */
export function mergeRetry(name: string, ...layers: (RetryOptions | undefined)[]): RetryPolicy {
  const pick = <K extends keyof RetryOptions>(key: K): RetryPolicy[K] | undefined => {
    for (const layer of layers) if (layer?.[key] !== undefined) return layer[key] as RetryPolicy[K]
    return undefined
  }
  const maxAttempts = pick('maxAttempts') ?? DEFAULT_RETRY.maxAttempts
  const policy: RetryPolicy = {
    maxAttempts,
    unknownMaxAttempts: pick('unknownMaxAttempts') ?? Math.min(maxAttempts, 2),
    baseMs: pick('baseMs') ?? DEFAULT_RETRY.baseMs,
    factor: pick('factor') ?? DEFAULT_RETRY.factor,
    capMs: pick('capMs') ?? DEFAULT_RETRY.capMs,
    jitter: pick('jitter') ?? DEFAULT_RETRY.jitter,
    jitterStrategy: pick('jitterStrategy') ?? DEFAULT_RETRY.jitterStrategy,
    order: pick('order') ?? DEFAULT_RETRY.order,
  }
  checkCap(name, policy)
  return policy
}

function checkCap(name: string, p: RetryOptions): void {
  if ((p.capMs as number) < (p.baseMs as number)) {
    throw new InvalidArgumentError(`${name}.capMs`, `≥ baseMs (${p.baseMs} ms)`, p.capMs)
  }
}

/**
 * Checks a registration's retry policy against the loop's before anything is registered: layered over
 * the loop's, it must make sense (capMs ≥ baseMs). A throwing getter is a typed error.
 * @throws InvalidArgumentError
 */
export function checkTypeRetry(options: { readonly retry?: unknown } | undefined, loopRetry: RetryOptions): void {
  const retry = check.readably('options.retry', () => options?.retry)
  check.readably(
    'options.retry',
    () => {
      if (retry !== undefined && retry !== null && typeof retry === 'object') {
        mergeRetry('options.retry', checkRetryOptions('options.retry', retry), loopRetry)
      }
    },
    retry,
  )
}

/** How many attempts in all a failure of this class allows. */
export function attemptsAllowed(policy: RetryPolicy, errorClass: ErrorClass): number {
  if (errorClass === 'retryable') return policy.maxAttempts
  if (errorClass === 'unknown') return policy.unknownMaxAttempts
  return 1
}

/**
 * The back-off (ms) after failed attempt `attempt` (1-based).
 *
 * @param previousMs - the previous back-off (for `decorrelated`; `baseMs` before the first)
 * @param random - uniform in [0, 1)
 *
 * @group Failure handling
 * @category Retries
 */
export function backoff(policy: RetryPolicy, attempt: number, previousMs: number, random: () => number): number {
  const { baseMs, factor, capMs, jitter, jitterStrategy } = policy
  const exponential = Math.min(capMs, baseMs * factor ** (attempt - 1))
  switch (jitterStrategy) {
    case 'full':
      return random() * exponential
    case 'decorrelated': {
      const high = Math.max(baseMs, previousMs * 3)
      return Math.min(capMs, baseMs + random() * (high - baseMs))
    }
    default:
      return Math.min(capMs, exponential * (1 + jitter * (2 * random() - 1)))
  }
}

/**
 * Guards a user's `random` option: a draw that throws or is not a number in [0, 1) falls back to
 * `Math.random()` for that draw (the retry still happens, with ordinary jitter), and `onBad` hears of
 * the first such draw — a broken random source must not lose the message being retried.
 */
export function guardRandom(random: () => number, onBad: (value: unknown) => void): () => number {
  if (random === Math.random) return random
  let reported = false
  return () => {
    let value: unknown
    try {
      value = random()
    } catch (error) {
      value = error
    }
    if (typeof value === 'number' && value >= 0 && value < 1) return value
    if (!reported) {
      reported = true
      onBad(value)
    }
    return Math.random()
  }
}
