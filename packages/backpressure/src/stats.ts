/**
 * What a {@link @flowing/backpressure!WatermarkController | WatermarkController} reports: transitions with their rates, and stats snapshots.
 *
 * @module
 */
import type { BreakerState } from './admission-breaker.js'
import type { PressureLevel } from './levels.js'

/**
 * Posts per second over one level period, carried by a {@link PressureTransition}.
 *
 * @group Watermarks
 */
export interface AdmissionRates {
  /** Admitted posts per second. */
  readonly admitted: number
  /** Shed posts per second. */
  readonly shed: number
  /** Rejected posts per second (level `reject` or breaker). */
  readonly rejected: number
}

/**
 * One level change, passed to `onTransition`: exactly one per crossing, however many levels it spans.
 *
 * @group Backpressure
 */
export interface PressureTransition {
  /** Level before. */
  readonly from: PressureLevel
  /** Level after. */
  readonly to: PressureLevel
  /** The fill ratio that caused it. */
  readonly fill: number
  /** Clock time of the change (ms). */
  readonly at: number
  /** Decisions per second during the period spent in `from` (zero for a period of 0 ms). */
  readonly rates: AdmissionRates
}

/**
 * Time and decisions of one level, in {@link WatermarkStats.levels}.
 *
 * @group Watermarks
 */
export interface LevelStats {
  /** Milliseconds spent in the level, including the current period up to now. */
  readonly timeMs: number
  /** Times the level was entered (the initial `normal` counts as one). */
  readonly entries: number
  /** Posts admitted while in the level. */
  readonly admitted: number
  /** Posts shed while in the level. */
  readonly shed: number
  /** Posts rejected while in the level. */
  readonly rejected: number
}

/**
 * The breaker part of {@link WatermarkStats}.
 *
 * @group Admission breaker
 */
export interface BreakerStats {
  /** The breaker's state at the snapshot. */
  readonly state: BreakerState
  /** How many times it opened so far. */
  readonly trips: number
}

/**
 * {@link LevelStats} of each level.
 *
 * @group Watermarks
 */
export interface StatsByLevel {
  /** Stats of `normal`. */
  readonly normal: LevelStats
  /** Stats of `warn`. */
  readonly warn: LevelStats
  /** Stats of `shed`. */
  readonly shed: LevelStats
  /** Stats of `reject`. */
  readonly reject: LevelStats
}

/**
 * A snapshot of a {@link @flowing/backpressure!WatermarkController | WatermarkController}, from {@link @flowing/backpressure!WatermarkController.stats | WatermarkController.stats}.
 *
 * @group Backpressure
 */
export interface WatermarkStats {
  /** The current level. */
  readonly level: PressureLevel
  /** The last fill ratio seen. */
  readonly fill: number
  /** Level changes so far (= `onTransition` calls). */
  readonly transitions: number
  /** Per level: time spent and decisions taken. */
  readonly levels: StatsByLevel
  /** The breaker's state and trip count, if the controller has one. */
  readonly breaker: BreakerStats | undefined
  /** The current retry-after hint (ms). */
  readonly retryAfterMs: number
}
