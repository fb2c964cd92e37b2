/**
 * The handle `schedule()` returns: a tiny object the caller may keep (to cancel) or drop (the wheel
 * does not need it — it keeps its own compact node).
 *
 * @module
 */

/**
 * What a {@link Timeout} needs from whoever issued it: a {@link TimingWheel} or a {@link WheelDriver}.
 * Implement it to wrap a wheel in your own scheduler and still hand out `Timeout`s.
 *
 * @group Timing wheel
 */
export interface TimerOwner {
  /** Cancels the timer `id`; true if it was still pending. */
  remove(id: number): boolean
  /** True while the timer `id` is pending (neither fired nor cancelled). */
  has(id: number): boolean
}

/**
 * A scheduled timer.
 *
 * @remarks A handle is *stale* once its timer fired (was returned by `advance()`) or was cancelled.
 * A stale handle is harmless: {@link Timeout.cancel} returns `false` and touches nothing, even after
 * the wheel reused the timer's storage for another timer (ids carry a generation counter).
 *
 * @typeParam T - the item type of the wheel
 *
 * @group Timing wheel
 */
export class Timeout<T> {
  /** The numeric timer id, as returned by the lean API (`add()` / `remove()`). */
  readonly id: number
  /** Absolute deadline in ms, on the wheel's clock. */
  readonly deadline: number
  /** The scheduled item. */
  readonly item: T
  // The issuer, asked for cancel() and pending: the handle itself holds no state that can go stale.
  readonly #owner: TimerOwner

  /**
   * Handles are created by `schedule()` / `scheduleAt()`; construct one yourself only when
   * implementing a {@link TimerOwner}.
   *
   * @param owner - who cancels and answers `pending`
   * @param id - the timer id
   * @param deadline - the absolute deadline in ms
   * @param item - the scheduled item
   */
  constructor(owner: TimerOwner, id: number, deadline: number, item: T) {
    this.#owner = owner
    this.id = id
    this.deadline = deadline
    this.item = item
  }

  /**
   * Cancels the timer.
   *
   * @returns `true` if it was pending (it will never be returned by `advance()`); `false` if it had
   * already fired or been cancelled — then nothing happens.
   */
  cancel(): boolean {
    return this.#owner.remove(this.id)
  }

  /** `true` until the timer fires or is cancelled. */
  get pending(): boolean {
    return this.#owner.has(this.id)
  }
}
