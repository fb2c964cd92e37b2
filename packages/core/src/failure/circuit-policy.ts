/**
 * A circuit breaker's policy: the defaults, and the check of what a user writes.
 *
 * @module
 */
import type { CircuitBreakerOptions, CircuitPolicy } from '../contracts/failures.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

/**
 * The defaults.
 *
 * @group Failure handling
 * @category Circuit breakers
 */
export const DEFAULT_CIRCUIT: CircuitPolicy = {
  per: 'type',
  consecutiveFailures: 5,
  failureRate: 0.5,
  windowMs: 10_000,
  minVolume: 20,
  cooldownMs: 30_000,
  probes: 1,
  probeTimeoutMs: 10_000,
}

const KEYS: readonly (keyof CircuitBreakerOptions)[] = Object.keys(DEFAULT_CIRCUIT) as (keyof CircuitPolicy)[]

/**
 * Validates breaker options (`true` means the defaults).
 * @throws InvalidArgumentError naming the field and the rule
 */
export function checkCircuitOptions(name: string, value: unknown): CircuitPolicy | false {
  if (value === false) return false
  if (value === true) return DEFAULT_CIRCUIT
  const raw = check.plainObject(name, value)
  check.knownKeys(name, raw, KEYS)
  const o = raw as { readonly [K in keyof CircuitBreakerOptions]?: unknown }
  if (o.per !== undefined) check.oneOf(`${name}.per`, o.per, ['type', 'route'] as const)
  if (o.consecutiveFailures !== undefined) check.positiveInteger(`${name}.consecutiveFailures`, o.consecutiveFailures)
  const rate = o.failureRate
  if (rate !== undefined && !(typeof rate === 'number' && rate > 0 && rate <= 1)) {
    throw new InvalidArgumentError(`${name}.failureRate`, 'a number in (0, 1]', rate)
  }
  if (o.windowMs !== undefined && !(typeof o.windowMs === 'number' && o.windowMs > 0 && Number.isFinite(o.windowMs))) {
    throw new InvalidArgumentError(`${name}.windowMs`, 'a positive finite number of ms', o.windowMs)
  }
  if (o.minVolume !== undefined) check.positiveInteger(`${name}.minVolume`, o.minVolume)
  if (o.cooldownMs !== undefined) check.nonNegativeNumber(`${name}.cooldownMs`, o.cooldownMs, false)
  if (o.probes !== undefined) check.positiveInteger(`${name}.probes`, o.probes, 65_536)
  const probeTimeout = o.probeTimeoutMs
  if (probeTimeout !== undefined && !(typeof probeTimeout === 'number' && probeTimeout > 0)) {
    throw new InvalidArgumentError(`${name}.probeTimeoutMs`, 'a positive number of ms', probeTimeout)
  }
  return { ...DEFAULT_CIRCUIT, ...(o as CircuitBreakerOptions) }
}
