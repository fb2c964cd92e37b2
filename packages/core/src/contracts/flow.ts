/**
 * Flow-control contracts: rate limits and their scopes, key groups, the resource gate, the time
 * limit, and the payloads of the `rate-limited` and `gate` events.
 *
 * @module
 */
import type { RetryAfterScope } from '../errors.js'
import type { LoopSnapshot } from './snapshot.js'

/**
 * Which messages share one budget.
 *
 * - `loop`: every message of the loop (the loop's `rateLimit` only);
 * - `type`: each message type has its own budget;
 * - `route`: each route (type and route key of the type's router) has its own;
 * - `key`: each message key has its own (keyless messages are not limited by it);
 * - `group`: each key group has its own (messages without a group are not limited by it).
 *
 * @group Flow control
 * @category Rate limits
 */
export type RateLimitScope = 'loop' | 'type' | 'route' | 'key' | 'group'

/**
 * A rate limit: at most `max` handler starts in any window of `perMs` — a sliding window, not a
 * fixed one, so no two windows' bursts can meet at a boundary. Up to `max` may start at once (a
 * burst); then the next waits until the oldest start is `perMs` old. A limited message waits in the
 * queue without holding a worker, keeps its key's order, and lets other work flow past it. Every
 * attempt counts (a retry calls the downstream again).
 *
 * @example
 * ```ts
 * // 50 calls a second to the payment provider, whatever the number of workers:
 * loop.on('payment.charge', charge, { rateLimit: { max: 50, perMs: 1000 } })
 * ```
 *
 * @group Flow control
 * @category Rate limits
 */
export interface RateLimit {
  /** Starts allowed in any window: an integer from 1 to 1,000,000. */
  readonly max: number
  /** The window (ms): a positive finite number. */
  readonly perMs: number
  /**
   * Which messages share the budget.
   * @defaultValue `'loop'` for the loop's `rateLimit`, `'type'` at registration, `'group'` in `groups`
   */
  readonly per?: RateLimitScope | undefined
}

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

/**
 * The resource gate closed or opened again, as the `gate` event reports it.
 *
 * @group Flow control
 * @category Boundaries
 */
export interface GateChange {
  /** `closed`: nothing starts until it opens; `open`: dispatch goes on. */
  readonly state: 'closed' | 'open'
  /** Clock time of the change (ms). */
  readonly at: number
  /** For `open`: how long it was closed (ms); 0 for `closed`. */
  readonly closedMs: number
  /** What the gate's `open()` threw, when that is why it closed. */
  readonly error?: unknown
}

/** A validated rate limit, with its scope and a loop-unique rule number. */
export interface RateRule {
  readonly id: number
  readonly max: number
  readonly perMs: number
  readonly per: RateLimitScope
}

/**
 * Why a message waits for its rate limit, as the `rate-limited` event reports it.
 *
 * @group Flow control
 * @category Rate limits
 */
export interface RateLimitHold {
  /**
   * The budget: `type:…`, `route:…/…`, `key:…`, `group:…`, or for a pause `retry-after:<route>`,
   * `retry-after:<route>/key:<key>`, `retry-after:<route>/group:<group>`.
   */
  readonly limit: string
  /** The budget's scope; `retry-after` for a pause a handler's `RateLimitError` put on its messages. */
  readonly scope: RateLimitScope | 'retry-after'
  /**
   * Clock time (ms) from which the budget has room again (the message may then start) — at the
   * earliest, when starts whose handlers have not been entered yet fill it.
   */
  readonly until: number
  /**
   * For a pause (scope `retry-after`): the starts per second its throttle allows now, once the
   * pause is over.
   */
  readonly perSecond?: number
  /**
   * For a pause (scope `retry-after`): whose messages it holds — the route's, or one key's or one
   * group's of that route (the `scope` of the `RateLimitError` that made it).
   */
  readonly retryAfterScope?: RetryAfterScope
  /**
   * On the hold of the message whose handler threw the `RateLimitError` (only there, not on the holds
   * of the messages that then wait behind the pause): the wait it asked for (ms). `@flowing/nats`
   * shares such a refusal with the other processes of its loop (see `LoopControls.pauseRoute`).
   */
  readonly retryAfterMs?: number
}
