/**
 * The watermark controller: a fill ratio in, a pressure level out, with hysteresis, one event per
 * crossing, per-level metrics, a retry-after hint, and the admission decision.
 *
 * @module
 */
import { type Rename, renameOptions } from '@flowing/errors'
import { AdmissionBreaker, type AdmissionBreakerOptions } from './admission-breaker.js'
import { type Decision, Decisions } from './decision.js'
import { BackpressureArgumentError } from './errors.js'
import {
  check,
  checkFunction,
  checkKnownKeys,
  checkNonNegative,
  checkOptions,
  checkPositive,
  FILL_RULE,
  PRIORITY_RULE,
} from './internal/validate.js'
import { parseWatermarks } from './internal/watermarks.js'
import { PRESSURE_LEVELS, type PressureLevel, type Watermark, type Watermarks } from './levels.js'
import type { LevelStats, PressureTransition, WatermarkStats } from './stats.js'

/**
 * Options of the {@link WatermarkController}. Every key is optional; unknown keys are refused.
 *
 * @group Watermarks
 */
export interface WatermarkControllerOptions {
  /** Marks of `warn`; a missing key takes its default. @defaultValue `{ enter: 0.6, exit: 0.5 }` */
  readonly warn?: Partial<Watermark>
  /** Marks of `shed`. @defaultValue `{ enter: 0.8, exit: 0.7 }` */
  readonly shed?: Partial<Watermark>
  /** Marks of `reject`. @defaultValue `{ enter: 0.95, exit: 0.85 }` */
  readonly reject?: Partial<Watermark>
  /** Minimum time in a level before falling out of it, in ms (rising is immediate). @defaultValue `0` */
  readonly minDwellMs?: number
  /** Upper bound of {@link WatermarkController.retryAfterMs}: a finite number > 0. @defaultValue `5000` */
  readonly maxRetryAfterMs?: number
  /** Options of the {@link AdmissionBreaker}, or `false` for none. @defaultValue `{}` (a breaker with defaults) */
  readonly admissionBreaker?: AdmissionBreakerOptions | false
  /** @deprecated The old name of `admissionBreaker` (same meaning; a `DeprecationWarning` once per process). */
  readonly breaker?: AdmissionBreakerOptions | false
  /** The clock, in ms. @defaultValue `performance.now` */
  readonly now?: () => number
  /** Called once per level change, after the state changed. */
  readonly onTransition?: (transition: PressureTransition) => void
}

const KNOWN = ['warn', 'shed', 'reject', 'minDwellMs', 'maxRetryAfterMs', 'admissionBreaker', 'now', 'onTransition']
// The controller's renamed options (old name → new, with a deprecation warning once).
const CONTROLLER_RENAMES: readonly Rename[] = [
  { from: 'breaker', to: 'admissionBreaker', code: 'FLOWING_DEP_ADMISSION_BREAKER' },
]
const fail = (argument: string, rule: string, value: unknown) => new BackpressureArgumentError(argument, rule, value)
const SHED = 2
const REJECT = 3
/**
 * The drain rate is re-estimated on every transition and on every `SAMPLE_EVERY`-th update…
 *
 * @group Watermarks
 */
export const SAMPLE_EVERY = 64
/**
 * …if at least `SAMPLE_MIN_MS` passed since the previous sample (a shorter window is noise).
 *
 * @group Watermarks
 */
export const SAMPLE_MIN_MS = 10

/** `counts[i]++` for a typed array (inlined by V8). */
function bump(counts: Float64Array, i: number): void {
  counts[i] = (counts[i] as number) + 1
}

/**
 * Turns a fill ratio (queue length ÷ capacity) into a {@link PressureLevel}, with hysteresis, and
 * answers admission with {@link WatermarkController.decide}.
 *
 * ```text
 *  fill  0 ──────── 0.5 ─ 0.6 ──── 0.7 ─ 0.8 ──── 0.85 ─ 0.95 ─── 1
 *  rise  normal ──────────▶ warn ───────▶ shed ────────────▶ reject      at fill ≥ enter
 *  fall  normal ◀── warn ◀──────── shed ◀──────── reject                 at fill < exit
 * ```
 *
 * @remarks
 * **Rising** goes straight to the highest level whose `enter` ≤ fill (several levels at once is one
 * transition). **Falling** happens when the fill is below the current level's `exit` and the level has
 * lasted `minDwellMs`; it drops through every level whose `exit` is above the fill (again one
 * transition). Inside a level's exit band the level never changes, so a fill oscillating around a mark
 * produces one event, not one per update.
 *
 * **Cost.** `update` and `decide` are O(1) and allocate nothing unless the level changes; they read
 * the clock only when a fall is due, on a transition, and once every {@link SAMPLE_EVERY} updates.
 *
 * **Retry-after hint.** {@link WatermarkController.retryAfterMs} = (fill − exit of the current level) ÷
 * drain rate, where the drain rate is the fill's slope between two samples; {@link SAMPLE_EVERY},
 * {@link SAMPLE_MIN_MS}. Zero below `shed`; `maxRetryAfterMs` when the queue is not draining; never
 * less than the breaker's remaining cooldown.
 *
 * @example
 * ```ts
 * import { WatermarkController } from '@flowing/backpressure'
 *
 * const events: string[] = []
 * const controller = new WatermarkController({ now: () => 0, onTransition: (t) => events.push(`${t.from}→${t.to}`) })
 * for (const fill of [0.3, 0.65, 0.55, 0.62, 0.97, 0.4]) controller.update(fill)
 * console.log(events) // ['normal→warn', 'warn→reject', 'reject→normal']
 * ```
 *
 * @group Watermarks
 */
export class WatermarkController {
  /** The validated marks in use. */
  readonly watermarks: Watermarks
  /** Minimum time in a level before falling out of it (ms). */
  readonly minDwellMs: number
  /** The breaker the `reject` level trips, or `undefined` (option `breaker: false`). */
  readonly breaker: AdmissionBreaker | undefined
  readonly #maxRetryAfterMs: number
  readonly #now: () => number
  readonly #onTransition: ((transition: PressureTransition) => void) | undefined
  // Marks indexed by level rank: #enter[i] enters level i, #exit[i] leaves it. #enter[4] = +∞ stops
  // the rise; #exit[0] = −∞ so `normal` is never left downwards. Typed arrays: numeric loads only.
  readonly #enter = new Float64Array(5)
  readonly #exit = new Float64Array(4)
  #level = 0
  #enteredAt: number
  #fill = 0
  #transitions = 0
  // Per level rank: closed periods' time, entries, decisions.
  readonly #time = new Float64Array(4)
  readonly #entries = new Float64Array(4)
  readonly #admitted = new Float64Array(4)
  readonly #shed = new Float64Array(4)
  readonly #rejected = new Float64Array(4)
  // Decisions of the current period, for the rates of the next transition.
  #periodAdmitted = 0
  #periodShed = 0
  #periodRejected = 0
  // Drain-rate estimation: counter of updates, last sample, slope in fill per ms (> 0: draining).
  #updates = 0
  #sampleAt: number
  #sampleFill = 0
  #drainPerMs = 0
  #retryAfterMs = 0

  /**
   * @param given - see {@link WatermarkControllerOptions}
   * @throws {@link BackpressureArgumentError} for an unknown key, a wrong type, a mark outside its
   * range, an exit not below its entry, or entries/exits not strictly increasing across levels
   */
  constructor(given: WatermarkControllerOptions = {}) {
    checkOptions('options', given)
    // One read of each option, so a throwing getter or Proxy trap is refused as a typed error.
    const options: WatermarkControllerOptions = renameOptions(
      '',
      check.snapshot('options', given),
      CONTROLLER_RENAMES,
      fail,
    )
    checkKnownKeys('options', options, KNOWN)
    const o = options as Readonly<Record<string, unknown>>
    this.watermarks = parseWatermarks(o)
    this.minDwellMs = options.minDwellMs === undefined ? 0 : checkNonNegative('minDwellMs', options.minDwellMs)
    this.#maxRetryAfterMs =
      options.maxRetryAfterMs === undefined ? 5000 : checkPositive('maxRetryAfterMs', options.maxRetryAfterMs)
    this.#now = options.now === undefined ? () => performance.now() : checkFunction<() => number>('now', options.now)
    this.#onTransition =
      options.onTransition === undefined
        ? undefined
        : checkFunction<(transition: PressureTransition) => void>('onTransition', options.onTransition)
    this.breaker = options.admissionBreaker === false ? undefined : new AdmissionBreaker(options.admissionBreaker)
    const { warn, shed, reject } = this.watermarks
    this.#enter.set([Number.NEGATIVE_INFINITY, warn.enter, shed.enter, reject.enter, Number.POSITIVE_INFINITY])
    this.#exit.set([Number.NEGATIVE_INFINITY, warn.exit, shed.exit, reject.exit])
    this.#enteredAt = this.#sampleAt = this.#now()
    this.#entries[0] = 1
  }

  /** The current level. */
  get level(): PressureLevel {
    return PRESSURE_LEVELS[this.#level] as PressureLevel
  }

  /**
   * How long a refused producer should wait before trying again, in ms (0 below `shed`). A hint,
   * refreshed on transitions and sampled updates, never per call: see the class remarks.
   */
  get retryAfterMs(): number {
    return this.#retryAfterMs
  }

  /**
   * Feeds a fill ratio; returns the level after it.
   *
   * @param fill - queue length ÷ capacity: a finite number ≥ 0 (above 1 is accepted)
   * @throws {@link BackpressureArgumentError} if `fill` is not a finite number ≥ 0
   */
  update(fill: number): PressureLevel {
    if (typeof fill !== 'number' || !(fill >= 0 && fill <= Number.MAX_VALUE)) {
      throw new BackpressureArgumentError('fill', FILL_RULE, fill)
    }
    return PRESSURE_LEVELS[this.#step(fill)] as PressureLevel
  }

  /**
   * Updates the level with `fill` and decides one post: one of the frozen {@link Decisions}, counted
   * in the level's metrics.
   *
   * @param fill - queue length ÷ capacity, before this post
   * @param priority - the post's priority; lower is more urgent
   * @param shedAbove - at level `shed`, posts with `priority > shedAbove` are shed
   * @returns `Decisions.reject` at level `reject`; `Decisions.breakerOpen` while the breaker holds;
   * `Decisions.shed` at level `shed` for a priority above `shedAbove`; otherwise `Decisions.admit`
   * @throws {@link BackpressureArgumentError} for a bad `fill`, or a `priority` or `shedAbove` that is
   * not a number or is NaN
   */
  decide(fill: number, priority: number, shedAbove: number): Decision {
    if (typeof fill !== 'number' || !(fill >= 0 && fill <= Number.MAX_VALUE)) {
      throw new BackpressureArgumentError('fill', FILL_RULE, fill)
    }
    if (typeof priority !== 'number' || Number.isNaN(priority)) {
      throw new BackpressureArgumentError('priority', PRIORITY_RULE, priority)
    }
    if (typeof shedAbove !== 'number' || Number.isNaN(shedAbove)) {
      throw new BackpressureArgumentError('shedAbove', PRIORITY_RULE, shedAbove)
    }
    const level = this.#step(fill)
    if (level === REJECT) {
      bump(this.#rejected, REJECT)
      this.#periodRejected++
      return Decisions.reject
    }
    const breaker = this.breaker
    if (breaker?.engaged === true && !breaker.gate(fill < (this.#exit[REJECT] as number), fill, this.#now)) {
      bump(this.#rejected, level)
      this.#periodRejected++
      return Decisions.breakerOpen
    }
    if (level === SHED && priority > shedAbove) {
      bump(this.#shed, SHED)
      this.#periodShed++
      return Decisions.shed
    }
    bump(this.#admitted, level)
    this.#periodAdmitted++
    if (breaker?.engaged === true && breaker.probe(fill, this.#now)) this.#refreshHint(fill, this.#now())
    return Decisions.admit
  }

  /** A snapshot of time per level (current period included up to now), transitions and decisions. */
  stats(): WatermarkStats {
    const now = this.#now()
    const levels = {} as Record<PressureLevel, LevelStats>
    PRESSURE_LEVELS.forEach((name, i) => {
      const current = i === this.#level ? Math.max(0, now - this.#enteredAt) : 0
      levels[name] = {
        timeMs: (this.#time[i] as number) + current,
        entries: this.#entries[i] as number,
        admitted: this.#admitted[i] as number,
        shed: this.#shed[i] as number,
        rejected: this.#rejected[i] as number,
      }
    })
    const breaker = this.breaker === undefined ? undefined : { state: this.breaker.state, trips: this.breaker.trips }
    return {
      level: this.level,
      fill: this.#fill,
      transitions: this.#transitions,
      levels,
      breaker,
      retryAfterMs: this.#retryAfterMs,
    }
  }

  /** The hysteresis step; returns the level rank. Reads the clock only when a move or a sample is due. */
  #step(fill: number): number {
    this.#fill = fill
    const from = this.#level
    const enter = this.#enter
    if (fill >= (enter[from + 1] as number)) {
      let to = from + 1
      while (fill >= (enter[to + 1] as number)) to++
      this.#transition(from, to, fill, this.#now())
    } else if (fill < (this.#exit[from] as number)) {
      const at = this.#now()
      // Dwell: a level must last minDwellMs before it may fall (rising never waits).
      if (at - this.#enteredAt >= this.minDwellMs) {
        let to = from - 1
        while (fill < (this.#exit[to] as number)) to--
        this.#transition(from, to, fill, at)
      }
    }
    if (++this.#updates % SAMPLE_EVERY === 0) this.#sample(fill, this.#now())
    return this.#level
  }

  #transition(from: number, to: number, fill: number, at: number): void {
    const period = Math.max(0, at - this.#enteredAt)
    const perSecond = period > 0 ? 1000 / period : 0
    const rates = {
      admitted: this.#periodAdmitted * perSecond,
      shed: this.#periodShed * perSecond,
      rejected: this.#periodRejected * perSecond,
    }
    // Invariant: all state changes (level, metrics, breaker) happen before any callback runs, so a
    // throwing callback cannot leave the controller half-updated.
    this.#time[from] = (this.#time[from] as number) + period
    this.#entries[to] = (this.#entries[to] as number) + 1
    this.#level = to
    this.#enteredAt = at
    this.#transitions++
    this.#periodAdmitted = this.#periodShed = this.#periodRejected = 0
    const tripped = to === REJECT ? this.breaker?.trip(at, fill) : undefined
    this.#sample(fill, at)
    const transition: PressureTransition = {
      from: PRESSURE_LEVELS[from] as PressureLevel,
      to: PRESSURE_LEVELS[to] as PressureLevel,
      fill,
      at,
      rates,
    }
    this.#onTransition?.(transition)
    this.breaker?.emit(tripped)
  }

  /** Re-estimates the drain rate if the window is long enough, then refreshes the hint. */
  #sample(fill: number, at: number): void {
    const window = at - this.#sampleAt
    if (window >= SAMPLE_MIN_MS) {
      this.#drainPerMs = (this.#sampleFill - fill) / window
      this.#sampleAt = at
      this.#sampleFill = fill
    }
    this.#refreshHint(fill, at)
  }

  #refreshHint(fill: number, at: number): void {
    let hint = 0
    if (this.#level >= SHED) {
      const excess = fill - (this.#exit[this.#level] as number)
      if (excess > 0) hint = this.#drainPerMs > 0 ? Math.ceil(excess / this.#drainPerMs) : this.#maxRetryAfterMs
    }
    const cooldown = this.breaker?.cooldownLeft(at) ?? 0
    this.#retryAfterMs = Math.min(this.#maxRetryAfterMs, Math.max(hint, Math.ceil(cooldown)))
  }
}
