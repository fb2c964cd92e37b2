/**
 * `loop.openCircuit` / `loop.closeCircuit`: their arguments checked, then the breaker forced.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'
import type { Circuits } from './circuits.js'

/**
 * Opens (`open`) or closes the breaker of `type`, of its route `options.routeKey`, for
 * `options.cooldownMs` when opening.
 * @throws InvalidArgumentError for a type without a breaker or bad options; nothing changes then
 */
export function forceCircuit(circuits: Circuits, type: unknown, options: unknown, open: boolean): void {
  const keys = open ? ['routeKey', 'cooldownMs'] : ['routeKey']
  const o: { readonly routeKey?: unknown; readonly cooldownMs?: unknown } =
    options === undefined ? {} : check.snapshotOptions('options', options)
  check.knownKeys(`${open ? 'openCircuit' : 'closeCircuit'}() options`, o, keys)
  if (typeof type !== 'string') throw new InvalidArgumentError('type', 'a message type', type)
  const { routeKey, cooldownMs } = o
  if (routeKey !== undefined && typeof routeKey !== 'string') {
    throw new InvalidArgumentError('options.routeKey', 'a string', routeKey)
  }
  const ms = cooldownMs === undefined ? undefined : check.nonNegativeNumber('options.cooldownMs', cooldownMs, false)
  if (!circuits.force(type, routeKey, open, ms)) {
    throw new InvalidArgumentError('type', 'a message type with a circuit breaker', type)
  }
}
