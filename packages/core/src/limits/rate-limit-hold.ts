/**
 * What the rate-limit stage tells others: why a message waits (the `rate-limited` event's payload),
 * and the booking of a start that the attempt beginning it hands back once its handler was entered.
 *
 * @module
 */
import type { RetryAfterScope } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { Limiter } from './limiter.js'
import type { RateLimitScope } from './rate-limit.js'

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
}

/**
 * The budgets one start booked, until its handler is entered (opaque outside the stage).
 */
export type Booking = readonly Limiter[]

/** What an attempt tells the budgets about its start: booked when taken, counted from its entry. */
export interface Bookings {
  /** The booking of `m`'s start, taken just now, if it booked any budget. */
  claim(m: Envelope): Booking | undefined
  /** The booked start's handler was entered before `now` (or never will be: its attempt ended). */
  entered(booking: Booking, now: number): void
}
