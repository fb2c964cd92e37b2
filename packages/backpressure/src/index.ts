/**
 * **@flowing/backpressure** — the backpressure policy of a bounded queue: tiered watermarks
 * (warn 60 %, shed 80 %, reject 95 % by default) with hysteresis and an optional dwell time, exactly one
 * event per crossing, per-level metrics, an allocation-free admission decision and an admission breaker
 * that gives consumers room to recover. Zero dependencies.
 *
 * @example
 * ```ts
 * import { Decisions, WatermarkController } from '@flowing/backpressure'
 *
 * let time = 0
 * const controller = new WatermarkController({ now: () => time })
 * console.log(controller.decide(0.5, 5, 2) === Decisions.admit) // true: normal
 * console.log(controller.decide(0.85, 5, 2) === Decisions.shed) // true: shed, priority 5 > 2
 * console.log(controller.decide(0.85, 1, 2) === Decisions.admit) // true: urgent posts still get in
 * time = 10
 * console.log(controller.decide(0.96, 0, 2).outcome) // 'reject'
 * ```
 *
 * @packageDocumentation
 * @module @flowing/backpressure
 */
export {
  AdmissionBreaker,
  type AdmissionBreakerOptions,
  type BreakerState,
  type BreakerTransition,
} from './admission-breaker.js'
export { type Decision, type DecisionCause, type DecisionOutcome, Decisions } from './decision.js'
export {
  BackpressureArgumentError,
  BackpressurePolicyError,
  type BackpressurePolicyErrorCode,
  describeValue,
} from './errors.js'
export { DEFAULT_WATERMARKS, PRESSURE_LEVELS, type PressureLevel, type Watermark, type Watermarks } from './levels.js'
export type {
  AdmissionRates,
  BreakerStats,
  LevelStats,
  PressureTransition,
  StatsByLevel,
  WatermarkStats,
} from './stats.js'
export {
  SAMPLE_EVERY,
  SAMPLE_MIN_MS,
  WatermarkController,
  type WatermarkControllerOptions,
} from './watermark-controller.js'
