/**
 * Per-message cancel (`loop.cancel()`, a post's `signal`, a `request()` that gives up): a message
 * still waiting is taken out of whichever stage holds it and ends `cancelled`; a running one has its
 * `ctx.signal` aborted and its handler decides (its outcome is whatever the attempt ends with).
 *
 * ```
 *  where ─┬─ ready · parked · unparked · grouped ─▶ queue.remove  ─┐
 *         ├─ held (breaker) ─▶ circuits.remove ─────────────────────┤
 *         ├─ limited ─▶ limits.remove ──────────────────────────────┼─▶ outcomes.cancelled
 *         ├─ backing off ─▶ retries ────────────────────────────────┤
 *         ├─ delayed · overdue ─▶ delayed store (its own outcome) ──┘
 *         └─ running ─▶ ctx.signal aborted
 * ```
 *
 * @module
 */

import type { MessageMap } from '../contracts/message.js'
import { MessageCancelledError } from '../errors.js'
import type { Circuits } from '../failure/circuits.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { RateLimits } from '../limits/rate-limits.js'
import type { Outcomes } from '../outcomes/outcomes.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import type { RunQueue } from '../queue/run-queue.js'
import type { DelayedPosts } from '../timers/delayed-posts.js'

/** What a cancel touches. */
export interface CancelParts<M extends MessageMap> {
  readonly queue: RunQueue
  readonly circuits: Circuits
  readonly limits: RateLimits
  readonly delayed: DelayedPosts
  readonly retries: DelayedPosts
  readonly outcomes: Outcomes<M>
  /** The attempts running now. */
  running(): readonly AttemptContext<M>[]
  /** A queued message left: room for producers, pressure levels. */
  roomFreed(): void
}

/**
 * What `loop.cancel()` did: `cancelled` (it was waiting: its outcome is `cancelled`), `aborted` (it
 * was running: its `ctx.signal` is aborted), or `unknown` (finished, or never this loop's).
 *
 * @group Messages
 * @category Cancel and request
 */
export type CancelResult = 'cancelled' | 'aborted' | 'unknown'

/** Cancels single messages wherever they wait. */
export class Cancels<M extends MessageMap> {
  readonly #p: CancelParts<M>

  constructor(parts: CancelParts<M>) {
    this.#p = parts
  }

  /**
   * Cancels `m`; `why` becomes the abort reason's message (a running handler sees a
   * `MessageCancelledError`, or `reason` when given).
   */
  cancel(m: Envelope, why: string, reason?: unknown): CancelResult {
    const p = this.#p
    const where = m.where
    if (where === Where.Running) return this.#abort(m, reason ?? new MessageCancelledError(m.id, why))
    if (where === Where.Delayed || where === Where.Overdue) {
      return p.delayed.cancelMessage(m) ? 'cancelled' : 'unknown'
    }
    if (!this.#takeOut(m)) return 'unknown'
    // Before the outcome, which forgets the message's group: its group's lane must not wait for it.
    p.queue.vacated(m)
    p.outcomes.cancelled(m)
    p.roomFreed()
    p.outcomes.idleCheck()
    return 'cancelled'
  }

  // Takes a waiting message out of its holder; false when no holder has it.
  #takeOut(m: Envelope): boolean {
    const p = this.#p
    switch (m.where) {
      case Where.Held:
        p.circuits.remove(m)
        p.queue.forget(m)
        return true
      case Where.Limited:
        p.limits.remove(m)
        p.queue.forget(m)
        return true
      case Where.Backoff:
        p.retries.cancelMessage(m)
        p.queue.forget(m)
        p.queue.releasePlace()
        return true
      default:
        return p.queue.remove(m)
    }
  }

  /** The live message with post number `seq`, wherever it is (a scan of every holder). */
  find(seq: number): Envelope | undefined {
    const p = this.#p
    return (
      p.queue.find(seq) ??
      p.circuits.find(seq) ??
      p.limits.find(seq) ??
      p.delayed.find(seq) ??
      p.retries.find(seq) ??
      p.running().find((ctx) => ctx.envelope.seq === seq)?.envelope
    )
  }

  #abort(m: Envelope, reason: unknown): CancelResult {
    for (const ctx of this.#p.running()) {
      if (ctx.envelope !== m) continue
      ctx.abort(false, reason)
      return 'aborted'
    }
    return 'unknown'
  }
}
