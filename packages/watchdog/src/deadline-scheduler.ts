/**
 * The one thing the watchdog needs from a timer: schedule an item at an absolute deadline, cancel it.
 *
 * @module
 */

/**
 * Schedules items at absolute deadlines and cancels them by id. `@flowing/timing-wheel`'s
 * `WheelDriver` (and `TimingWheel`) satisfy it as they are, so a loop can share its one driver with
 * the watchdog.
 *
 * @remarks The deadlines are on the timeline of the watchdog's clock (`timers.now()`): pass the same
 * clock to both. Whoever owns the scheduler must hand every due item that is an {@link Attempt} to
 * {@link Watchdog.onDue}, and must never deliver an item before its deadline.
 *
 * @typeParam T - the item type
 *
 * @group Watchdog
 */
export interface DeadlineScheduler<T> {
  /** Schedules `item` at the absolute time `deadline`; returns an id for {@link DeadlineScheduler.remove}. */
  add(deadline: number, item: T): number
  /** Cancels the item scheduled under `id`; `false` when it is no longer pending. */
  remove(id: number): boolean
}
