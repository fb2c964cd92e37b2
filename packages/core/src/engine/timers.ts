/**
 * The one timing wheel and what lives on it: delayed posts, handler deadlines (the watchdog), and —
 * through their stages — retries' back-offs and rate limits' wake-ups. Each due item reaches its
 * owner through the loop-backs. Nothing here runs per message.
 *
 * @module
 */
import { WheelDriver } from '@flowing/timing-wheel'
import { type Attempt, type DeadlineScheduler, Watchdog } from '@flowing/watchdog'
import type { Clock } from '../contracts/clock.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { isWaiting } from '../jobs/keyed-jobs.js'
import type { Limiter } from '../limits/limiter.js'
import { DelayedPosts } from '../timers/delayed-posts.js'

/** An item of the loop's wheel. */
export type WheelItem = Envelope | Attempt | Limiter

/** One wheel and one real timer (on the releasable clock) for every timer of the loop. */
export function newWheel(
  options: Pick<ResolvedLoopOptions, 'dispatchBudget' | 'maxDelayed' | 'capacity'>,
  lingering: Clock,
  due: (items: readonly WheelItem[]) => void,
): WheelDriver<WheelItem> {
  // Delayed messages, retries (they keep places in the queue) and handler deadlines.
  const maxPending = Math.min(16_000_000, options.maxDelayed + options.capacity + 2 * 65_536)
  return new WheelDriver<WheelItem>({ timers: lingering, budget: options.dispatchBudget, maxPending, onDue: due })
}

/** Handler deadlines (`timeoutMs`) on the shared wheel; a timeout frees the attempt's slot. */
export function newWatchdog(
  clock: Clock,
  wheel: WheelDriver<WheelItem>,
  graceMs: number,
  timedOut: (attempt: Attempt, error: unknown) => void,
): Watchdog {
  return new Watchdog({ timers: clock, scheduler: wheel as DeadlineScheduler<Attempt>, graceMs, onTimeout: timedOut })
}

/** Delayed posts on the wheel: a due one enters through admission; a cancelled one ends in the outcomes. */
export function newDelayed(
  wheel: WheelDriver<WheelItem>,
  enterDue: (m: Envelope) => boolean,
  outcomes: { cancelled(m: Envelope): void },
  backs: { cancel(m: Envelope, why: string): unknown; cameDue(m: Envelope): void },
): DelayedPosts {
  const cancelWaiting = (m: Envelope) => isWaiting(m) && backs.cancel(m, 'its handle was cancelled') === 'cancelled'
  const owner = { enterDue, cancelled: (m: Envelope) => outcomes.cancelled(m), cancelWaiting, cameDue: backs.cameDue }
  return new DelayedPosts(wheel as DeadlineScheduler<Envelope>, owner, Where.Delayed)
}
