/**
 * The loop options of flow control: rate limits, key groups, the resource gate and the time limit —
 * their types, their validation, their defaults.
 *
 * @module
 */

import type {
  RateRule,
  ResolvedFlowOptions,
  ResolvedGroup,
  ResolvedGroups,
  ResourceGate,
  TimeLimitOptions,
} from '../contracts/flow.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'
import { checkRateLimits } from './rate-limit.js'

/** Their names, for the unknown-option check. */
export const FLOW_OPTION_KEYS = ['rateLimit', 'groups', 'gate', 'timeLimit'] as const

type Pick = <T>(key: (typeof FLOW_OPTION_KEYS)[number], fallback: T, validate: (n: string, v: unknown) => T) => T

/** Validates the flow-control options (through the loop's `pick`). */
export function resolveFlowOptions(pick: Pick): ResolvedFlowOptions {
  return {
    rateLimit: pick('rateLimit', [] as readonly RateRule[], (n, v) => checkRateLimits(n, v, LOOP_SCOPES)),
    groups: pick('groups', undefined as ResolvedGroups | undefined, checkGroups),
    gate: pick('gate', false as ResourceGate | false, checkGate),
    timeLimit: pick('timeLimit', false as TimeLimitOptions | false, checkTimeLimit),
  }
}

const LOOP_SCOPES = ['loop', 'type', 'route', 'key'] as const

function checkGroup(name: string, value: unknown, keys: readonly string[], fallback?: ResolvedGroup): ResolvedGroup {
  const o = check.snapshotOptions(name, value)
  check.checkKnownKeys(name, o, keys)
  const concurrency =
    o['concurrency'] === undefined
      ? (fallback?.concurrency ?? 1)
      : check.positiveInteger(`${name}.concurrency`, o['concurrency'], 65_536)
  const rules =
    o['rateLimit'] === undefined
      ? (fallback?.rules ?? [])
      : checkRateLimits(`${name}.rateLimit`, o['rateLimit'], ['group'])
  return { concurrency, rules }
}

function checkGroups(name: string, value: unknown): ResolvedGroups {
  const snapshot = check.snapshotOptions(name, value)
  const base = checkGroup(name, snapshot, ['concurrency', 'rateLimit', 'overrides'])
  const given = snapshot['overrides']
  const overrides = new Map<string, ResolvedGroup>()
  if (given !== undefined) {
    const o = check.snapshotOptions(`${name}.overrides`, given)
    for (const group of Object.keys(o)) {
      overrides.set(group, checkGroup(`${name}.overrides.${group}`, o[group], ['concurrency', 'rateLimit'], base))
    }
  }
  return { ...base, overrides }
}

function checkGate(name: string, value: unknown): ResourceGate | false {
  if (value === false) return false
  const o = check.snapshotOptions(name, value)
  check.checkKnownKeys(name, o, ['open', 'pollMs'])
  check.fn(`${name}.open`, o['open'])
  const pollMs = o['pollMs']
  if (pollMs !== undefined && !(typeof pollMs === 'number' && pollMs > 0 && Number.isFinite(pollMs))) {
    throw new InvalidArgumentError(`${name}.pollMs`, 'a positive finite number of ms', pollMs)
  }
  return o as unknown as ResourceGate
}

function checkTimeLimit(name: string, value: unknown): TimeLimitOptions | false {
  if (value === false) return false
  const o = check.snapshotOptions(name, value)
  check.checkKnownKeys(name, o, ['maxRunMs', 'deadlineMs', 'onSnapshot'])
  const max = o['maxRunMs']
  if (!(typeof max === 'number' && max > 0 && Number.isFinite(max))) {
    throw new InvalidArgumentError(`${name}.maxRunMs`, 'a positive finite number of ms', max)
  }
  if (o['deadlineMs'] !== undefined) check.nonNegativeNumber(`${name}.deadlineMs`, o['deadlineMs'], false)
  if (o['onSnapshot'] !== undefined) check.fn(`${name}.onSnapshot`, o['onSnapshot'])
  return o as unknown as TimeLimitOptions
}
