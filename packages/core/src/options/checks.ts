/**
 * The validators of the loop options that take user objects: loggers, the dead-letter and alert
 * settings, idempotency, the failure exit, the journal store. Each returns the value it accepted or
 * throws an `InvalidArgumentError` naming the option's path.
 *
 * @module
 */

import type { AlertOptions, DeadLetterSink, FailureLogger } from '../contracts/failures.js'
import type { IdempotencyOptions } from '../contracts/idempotency.js'
import type { FailureExitOptions, ResolvedDeadLetters } from '../contracts/options.js'
import type { MessageLogger } from '../contracts/outcomes.js'
import type { Store } from '../contracts/store.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

/** Validates the `logger` option. */
export function checkLogger(name: string, value: unknown): FailureLogger | false {
  if (value === false) return false
  check.fn(`${name}.warn`, (check.plainObject(name, value) as { warn?: unknown }).warn)
  return value as FailureLogger
}

/** Validates the `messageLog` option. */
export function checkMessageLog(name: string, value: unknown): MessageLogger | false {
  if (value === false) return false
  const log = check.plainObject(name, value) as { info?: unknown; warn?: unknown }
  check.fn(`${name}.info`, log.info)
  check.fn(`${name}.warn`, log.warn)
  return value as MessageLogger
}

/** Validates the `deadLetters` option. */
export function checkDeadLetters(name: string, value: unknown): ResolvedDeadLetters {
  const raw = check.plainObject(name, value)
  check.knownKeys(name, raw, ['maxSize', 'sink'])
  const o = raw as { readonly maxSize?: unknown; readonly sink?: unknown }
  const maxSize = o.maxSize === undefined ? 10_000 : check.nonNegativeInteger(`${name}.maxSize`, o.maxSize)
  if (o.sink !== undefined)
    check.fn(`${name}.sink.add`, (check.plainObject(`${name}.sink`, o.sink) as { add?: unknown }).add)
  return { maxSize, sink: o.sink as DeadLetterSink | undefined }
}

/** Validates the `alerts` option. */
export function checkAlerts(name: string, value: unknown): AlertOptions {
  const raw = check.plainObject(name, value)
  check.knownKeys(name, raw, ['windowMs', 'threshold', 'top', 'onAlert'])
  const o = raw as { readonly [K in keyof AlertOptions]?: unknown }
  if (o.windowMs !== undefined && !(typeof o.windowMs === 'number' && o.windowMs > 0 && Number.isFinite(o.windowMs))) {
    throw new InvalidArgumentError(`${name}.windowMs`, 'a positive finite number of ms', o.windowMs)
  }
  if (o.threshold !== undefined) check.positiveInteger(`${name}.threshold`, o.threshold)
  if (o.top !== undefined) check.nonNegativeInteger(`${name}.top`, o.top)
  if (o.onAlert !== undefined) check.fn(`${name}.onAlert`, o.onAlert)
  return o as AlertOptions
}

/** Validates the `idempotency` option. */
export function checkIdempotency(name: string, value: unknown): IdempotencyOptions {
  const raw = check.plainObject(name, value)
  check.knownKeys(name, raw, ['store', 'ttlMs', 'maxKeys', 'failed', 'dedupe'])
  const o = raw as { readonly [K in keyof IdempotencyOptions]?: unknown }
  if (o.store !== undefined) {
    const store = check.plainObject(`${name}.store`, o.store) as Record<string, unknown>
    for (const method of ['claim', 'set', 'release']) check.fn(`${name}.store.${method}`, store[method])
  }
  if (o.ttlMs !== undefined && !(typeof o.ttlMs === 'number' && o.ttlMs > 0)) {
    throw new InvalidArgumentError(`${name}.ttlMs`, 'a positive number of ms', o.ttlMs)
  }
  if (o.maxKeys !== undefined) check.positiveInteger(`${name}.maxKeys`, o.maxKeys)
  if (o.failed !== undefined) check.oneOf(`${name}.failed`, o.failed, ['retry', 'duplicate'] as const)
  if (o.dedupe !== undefined) check.oneOf(`${name}.dedupe`, o.dedupe, ['id', 'none'] as const)
  return o as IdempotencyOptions
}

/** Validates the `failureExit` option. */
export function checkFailureExit(name: string, value: unknown): false | FailureExitOptions {
  if (value === false) return false
  const raw = check.plainObject(name, value)
  check.knownKeys(name, raw, ['failureRate', 'windowMs', 'minVolume', 'deadlineMs', 'onSnapshot'])
  const o = raw as { readonly [K in keyof FailureExitOptions]?: unknown }
  if (!(typeof o.failureRate === 'number' && o.failureRate > 0 && o.failureRate <= 1)) {
    throw new InvalidArgumentError(`${name}.failureRate`, 'a number in (0, 1]', o.failureRate)
  }
  if (o.windowMs !== undefined && !(typeof o.windowMs === 'number' && o.windowMs > 0 && Number.isFinite(o.windowMs))) {
    throw new InvalidArgumentError(`${name}.windowMs`, 'a positive finite number of ms', o.windowMs)
  }
  if (o.minVolume !== undefined) check.positiveInteger(`${name}.minVolume`, o.minVolume)
  if (o.deadlineMs !== undefined) check.nonNegativeNumber(`${name}.deadlineMs`, o.deadlineMs, true)
  if (o.onSnapshot !== undefined) check.fn(`${name}.onSnapshot`, o.onSnapshot)
  return o as FailureExitOptions
}

/** Validates the `store` option. */
export function checkStore(name: string, value: unknown): Store {
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError(name, 'a journal store', value)
  const s = value as Record<string, unknown>
  if (typeof s['name'] !== 'string' || s['name'] === '')
    throw new InvalidArgumentError(`${name}.name`, 'a non-empty string', s['name'])
  for (const method of ['recovered', 'commit', 'close']) check.fn(`${name}.${method}`, s[method])
  if (s['watch'] !== undefined) check.fn(`${name}.watch`, s['watch'])
  return value as Store
}
