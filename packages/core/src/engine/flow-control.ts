/**
 * Builds the rate-limit stage and key groups of one loop, and hooks them into the run queue: the
 * loop's and each type's budgets (cached per type, refreshed at each registration), the groups'
 * concurrency and budgets, the `rate-limited` event.
 *
 * @module
 */

import type { DeadlineScheduler } from '@flowing/watchdog'
import type { Clock } from '../contracts/clock.js'
import type { RateRule } from '../contracts/flow.js'
import type { Message, MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { Registry } from '../dispatcher/registry.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { PostExtras } from '../internal/post-extras.js'
import type { RecordParts } from '../journal/records.js'
import { DispatchGate, type LoopBudgets } from '../limits/dispatch-gate.js'
import type { Limiter } from '../limits/limiter.js'
import { RateLimits } from '../limits/rate-limits.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import { KeyGroups } from '../queue/key-groups.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { StartFilters } from '../queue/start-filters.js'
import type { Urgency } from '../queue/urgency.js'
import { QueueHold } from '../shutdown/holders.js'

/** Where rate-limited messages wait: their place in the queue, their wake-up on the wheel. */
export interface FlowHoldPorts {
  readonly queue: RunQueue
  /** The queue's start filters (the rate limits' hold sets its own). */
  readonly starts: StartFilters
  readonly wheel: unknown
  /** Held messages re-entered the queue: pump. */
  pump(): void
}

/** What flow control is built from. */
export interface FlowParts<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly metrics: LoopMetrics
  readonly registry: Registry<M>
  /** The per-post side tables: a post's group, the traces. */
  readonly records: RecordParts
  readonly holds: FlowHoldPorts
}

const NONE: readonly RateRule[] = []

/** The loop's rate-limit stage, with the run queue's hooks set. */
export function newFlowControl<M extends MessageMap>(
  p: FlowParts<M>,
  urgency: Urgency,
): { readonly limits: RateLimits; readonly hold: QueueHold } {
  const o = p.options
  const loopRules = o.rateLimit.filter((r) => r.per === 'loop')
  const everyType = o.rateLimit.filter((r) => r.per !== 'loop')
  const rules = new Map<string, readonly RateRule[]>()
  const groups = o.groups
  const queue = p.holds.queue
  const enable = () => hold.filterStarts((m) => limits.mustHold(m, p.clock.now()))
  const limits: RateLimits = new RateLimits(
    {
      hold: (m) => hold.enter(m),
      release: (m) => {
        hold.leave(m)
        p.records.traces.note(m, 'queued', p.clock.now(), undefined, 'its rate limit has room')
      },
      limited: (m, hold) => {
        p.records.traces.note(m, 'rate-limited', p.clock.now(), undefined, hold.limit)
        p.events.emit('rate-limited', m as unknown as Message<M>, hold)
      },
      pump: p.holds.pump,
      enable,
      rulesOf: (type) => {
        let r = rules.get(type)
        if (r === undefined) {
          const own = p.registry.rateLimitsFor(type)
          r = everyType.length === 0 ? own : own.length === 0 ? everyType : [...everyType, ...own]
          rules.set(type, r)
        }
        return r
      },
      groupOf: (m: Envelope) => p.records.extras.groupOf(m),
      groupRules: (group) => (groups === undefined ? NONE : (groups.overrides.get(group)?.rules ?? groups.rules)),
    },
    p.holds.wheel as DeadlineScheduler<Limiter>,
    urgency.compare,
    loopRules,
  )
  const hold = new QueueHold(limits, queue, p.holds.starts, 'limit')
  p.metrics.rateLimitHolds = () => limits.holds
  const grouped =
    groups !== undefined && (groups.rules.length > 0 || [...groups.overrides.values()].some((g) => g.rules.length > 0))
  if (loopRules.length > 0 || everyType.length > 0 || grouped) enable()
  // A registration may bring budgets: the per-type cache starts over.
  p.registry.onChange(() => {
    rules.clear()
    if (p.registry.limited) enable()
  })
  return { limits, hold }
}

/** What the dispatch gate (and the stall detector) is built from. */
export interface GateParts<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly events: LoopEmitter<M>
  readonly queue: RunQueue
  readonly limits: LoopBudgets
  readonly lingering: Clock
  readonly schedulePump: () => void
}

/** The resource gate and the loop-wide budgets, asked before every start (when there are any). */
export function newGate<M extends MessageMap>(e: GateParts<M>): DispatchGate | undefined {
  const gate = e.options.gate
  if (gate === false && !e.limits.gated) return undefined
  return new DispatchGate(e.limits, gate, e.lingering, {
    changed: (change) => e.events.emit('gate', change),
    pump: e.schedulePump,
    waiting: () => e.queue.length > 0,
  })
}

/** The key groups of the `groups` option (a concurrency per group), or none: a filter of the run queue. */
export function newKeyGroups(
  groups: ResolvedLoopOptions['groups'],
  extras: Pick<PostExtras, 'groupOf'>,
  urgency: Urgency,
): KeyGroups | undefined {
  if (groups === undefined) return undefined
  const limit = (group: string) => groups.overrides.get(group)?.concurrency ?? groups.concurrency
  return new KeyGroups({ of: (m) => extras.groupOf(m), limit }, urgency.compare)
}
