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
import { Envelope, Where } from '../internal/envelope.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import { holderList, type LoopHolders } from '../shutdown/holders.js'

/** What a cancel touches. */
export interface CancelParts<M extends MessageMap> {
  /** Every holder of waiting messages (one port: find, remove). */
  readonly holders: LoopHolders
  /** A cancelled message leaves its key group's lane (before its outcome forgets its group). */
  readonly queue: { vacated(m: Envelope): void }
  /** Where a cancelled message ends. */
  readonly outcomes: { cancelled(m: Envelope): void; idleCheck(): void }
  /** The attempts running now. */
  running(): readonly AttemptContext<M>[]
  /** A queued message left: room for producers, pressure levels. */
  roomFreed(): void
  /** The post number of one of this loop's ids (undefined for anything else). */
  seqOf(id: unknown): number | undefined
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

  /** `loop.cancel()`: by id (a scan of every holder) or by the message `post()` returned. */
  byUser(message: unknown): CancelResult {
    const { seqOf } = this.#p
    const target = typeof message === 'string' ? this.find(seqOf(message) ?? -1) : message
    if (!(target instanceof Envelope) || seqOf(target.id) === undefined) return 'unknown'
    return this.cancel(target, 'loop.cancel()')
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
      return p.holders.delayed.remove(m) ? 'cancelled' : 'unknown' // its handle records the outcome
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
    const h = this.#p.holders
    switch (m.where) {
      case Where.Held:
        return h.breakers.remove(m)
      case Where.Limited:
        return h.limits.remove(m)
      case Where.Backoff:
        return h.retries.remove(m)
      default:
        return h.queue.remove(m)
    }
  }

  /** The live message with post number `seq`, wherever it is (a scan of every holder). */
  find(seq: number): Envelope | undefined {
    for (const holder of holderList(this.#p.holders)) {
      const m = holder.find(seq)
      if (m !== undefined) return m
    }
    return this.#p.running().find((ctx) => ctx.envelope.seq === seq)?.envelope
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
