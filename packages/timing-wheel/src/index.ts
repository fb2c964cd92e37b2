/**
 * **@flowing/timing-wheel** — a hierarchical hashed timing wheel (Varghese & Lauck 1987, scheme 7) for
 * delayed work that must be cheap, cancellable and never early: O(1) schedule and cancel, ~40 B per
 * pending timer, any delay up to `Number.MAX_SAFE_INTEGER` ms, due items in deadline order; plus a
 * driver that keeps one real timer armed for the next deadline. Zero dependencies.
 *
 * @example
 * ```ts
 * import { TimingWheel } from '@flowing/timing-wheel'
 *
 * let time = 0
 * const wheel = new TimingWheel<string>({ now: () => time })
 * wheel.schedule(1_000, 'b')
 * wheel.schedule(500, 'a')
 * time = 1_000
 * console.log(wheel.advance()) // ['a', 'b']
 * ```
 *
 * @packageDocumentation
 * @module @flowing/timing-wheel
 */
export {
  describeValue,
  TimingWheelError,
  type TimingWheelErrorCode,
  WheelArgumentError,
  WheelFullError,
} from './errors.js'
export { Timeout, type TimerOwner } from './timeout.js'
export { systemTimers, type TimerProvider } from './timer-provider.js'
export { TimingWheel, type TimingWheelOptions, type TimingWheelStats } from './timing-wheel.js'
export { WheelDriver, type WheelDriverOptions, type WheelDriverStats } from './wheel-driver.js'
