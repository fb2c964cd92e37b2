/**
 * What the rate-limit stage tells others: why a message waits (the `rate-limited` event's payload),
 * and the booking of a start that the attempt beginning it hands back once its handler was entered.
 *
 * @module
 */

import type { RateLimitScope } from '../contracts/flow.js'
import type { RetryAfterScope } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { Limiter } from './limiter.js'

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
