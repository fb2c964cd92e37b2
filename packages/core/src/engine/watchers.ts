/**
 * The watchers a loop may run beside its stages: the per-type timeout breakers and the stall
 * detector, built from the loop's options.
 *
 * @module
 */
import { StallDetector } from '@flowing/watchdog'
import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import { TimeoutBreakers } from '../pool/timeout-breakers.js'
import type { RunQueue } from '../queue/run-queue.js'

/** What the watchers read. */
export interface WatcherParts<M extends MessageMap> {
  readonly options: ResolvedLoopOptions
  readonly clock: Clock
  readonly events: LoopEmitter<M>
}

/** Per-type escalation after repeated timeouts (`timeoutBreaker`). */
export function newTimeoutBreakers<M extends MessageMap>(p: WatcherParts<M>): TimeoutBreakers | undefined {
  const tb = p.options.timeoutBreaker
  if (tb === false) return undefined
  return new TimeoutBreakers(tb.threshold ?? 5, tb.cooldownMs ?? 30_000, p.clock, (change) => {
    p.events.emit('timeout-breaker', change)
    p.events.emit('breaker', change) // (the deprecated name, while it lives)
  })
}

/**
 * Reports a blocked event loop or no progress while work waits (`stall` option) — not while work
 * waits on purpose (for a rate limit, a closed gate, a full loop-wide budget).
 */
export function newStallDetector<M extends MessageMap>(
  p: WatcherParts<M> & {
    readonly queue: RunQueue
    readonly gate: { holds(): boolean } | undefined
    /** The attempts running now. */
    running(): AttemptContext<M>[]
  },
): StallDetector | undefined {
  const stall = p.options.stall
  if (stall === false) return undefined
  return new StallDetector({
    ...(stall === true ? {} : stall),
    timers: p.clock,
    onStall: (report) => p.events.emit('stall', report),
    busy: () => p.queue.length > p.queue.limited && p.gate?.holds() !== true,
    describeRunning: () => p.running().map((ctx) => ctx.describe(p.clock.now())),
  })
}
