/**
 * The loop options of flow control: rate limits, key groups, the resource gate and the time limit —
 * their types, their validation, their defaults.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'
import type { LoopSnapshot } from '../shutdown/snapshot.js'
import { checkRateLimits, type RateLimit, type RateRule } from './rate-limit.js'

/**
 * One key group's settings (see {@link GroupOptions}).
 *
 * @group Flow control
 * @category Key groups
 */
export interface GroupLimits {
  /**
   * How many of the group's messages may run at once: an integer from 1 to 65,536.
   * @defaultValue the `groups` option's `concurrency`
   */
  readonly concurrency?: number
  /**
   * The group's own rate limits (each group has its own budget).
   * @defaultValue the `groups` option's `rateLimit`
   */
  readonly rateLimit?: RateLimit | readonly RateLimit[]
}

/**
 * Key groups (a post's `group`): at most `concurrency` messages of one group run at once, FIFO among
 * equal priority, under the group's rate limits — per tenant, per downstream, per account. Messages
 * without a group are not affected.
 *
 * @example
 * ```ts
 * const loop = createLoop<Messages>({
 *   groups: { concurrency: 2, overrides: { 'tenant-big': { concurrency: 8 } } },
 * })
 * loop.post('report.build', { tenant: 'tenant-a' }, { group: 'tenant-a' })
 * ```
 *
 * @group Flow control
 * @category Key groups
 */
export interface GroupOptions extends GroupLimits {
  /** Settings of named groups, over the defaults above. */
  readonly overrides?: Readonly<Record<string, GroupLimits>>
}

/**
 * A resource gate: asked before each handler start; while it answers `false`, nothing starts (posts
 * are still admitted) and it is asked again every `pollMs`. The `gate` event tells each closing and
 * opening. A gate that throws counts as closed (its error is in the event).
 *
 * @example
 * ```ts
 * // Pause dispatch while fewer than 20 % of the pool's connections are free:
 * createLoop({ gate: { open: () => pool.idleCount / pool.totalCount >= 0.2, pollMs: 50 } })
 * ```
 *
 * @group Flow control
 * @category Boundaries
 */
export interface ResourceGate {
  /** True when handlers may start. Called synchronously before each start: keep it cheap. */
  readonly open: () => boolean
  /**
   * How often a closed gate is asked again (ms, > 0).
   * @defaultValue 100
   */
  readonly pollMs?: number
}

/**
 * A time limit: the loop stops by itself after `maxRunMs` from its first `start()` (from its creation with `autoStart`) — draining for at
 * most `deadlineMs`, then handing back what is left in the stop's snapshot (also `loop.stop()`'s
 * value) — and the `time-limit` event fires.
 *
 * @group Flow control
 * @category Boundaries
 */
export interface TimeLimitOptions {
  /** How long the loop may run (ms, > 0, finite). */
  readonly maxRunMs: number
  /**
   * How long the stop may drain before it hands back what is left (ms, ≥ 0).
   * @defaultValue 0 (hand back at once what has not started; running handlers are aborted)
   */
  readonly deadlineMs?: number
  /** Receives the stop's snapshot (e.g. to save it for the next run). */
  readonly onSnapshot?: (snapshot: LoopSnapshot) => unknown
}

/**
 * The flow-control options of `createLoop()`.
 *
 * @group Flow control
 */
export interface FlowControlOptions {
  /**
   * Rate limits over the whole loop (`per: 'loop'`, the default) or per type, route or key of every
   * type (see {@link RateLimit}); each registration may add its own (`loop.on(…, { rateLimit })`).
   */
  readonly rateLimit?: RateLimit | readonly RateLimit[]
  /** Key groups with a concurrency limit and rate limits (see {@link GroupOptions}). */
  readonly groups?: GroupOptions
  /** A resource gate checked before each start (see {@link ResourceGate}). */
  readonly gate?: ResourceGate | false
  /** Stop by itself after a maximum running time (see {@link TimeLimitOptions}). */
  readonly timeLimit?: TimeLimitOptions | false
}

/** A group's settings, validated. */
export interface ResolvedGroup {
  readonly concurrency: number
  readonly rules: readonly RateRule[]
}

/** The `groups` option, validated. */
export interface ResolvedGroups extends ResolvedGroup {
  readonly overrides: ReadonlyMap<string, ResolvedGroup>
}

/** The flow-control options with defaults applied. */
export interface ResolvedFlowOptions {
  readonly rateLimit: readonly RateRule[]
  readonly groups: ResolvedGroups | undefined
  readonly gate: ResourceGate | false
  readonly timeLimit: TimeLimitOptions | false
}

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
