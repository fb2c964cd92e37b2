/**
 * The four pressure levels and the watermarks between them.
 *
 * @module
 */

/**
 * How hard the queue is pushing back, from calm to overloaded.
 *
 * - `normal` — admit everything.
 * - `warn` — admit everything, tell producers to slow down (one event per crossing).
 * - `shed` — refuse posts less urgent than a threshold; urgent posts still get in.
 * - `reject` — refuse every post, and trip the {@link @flowing/backpressure!AdmissionBreaker | AdmissionBreaker}.
 *
 * @group Backpressure
 */
export type PressureLevel = 'normal' | 'warn' | 'shed' | 'reject'

/**
 * The levels in rising order; a level's index is its rank (`normal` = 0 … `reject` = 3).
 *
 * @group Watermarks
 */
export const PRESSURE_LEVELS: readonly PressureLevel[] = Object.freeze(['normal', 'warn', 'shed', 'reject'])

/**
 * The two marks of one level, as fill ratios (queue length ÷ capacity).
 *
 * @remarks The level is entered when the fill reaches `enter` and left only when it drops below
 * `exit`: the gap between the two (the *exit band*) is what keeps the level from flapping.
 *
 * @group Watermarks
 */
export interface Watermark {
  /** Fill ratio at or above which the level is entered; in (0, 1]. */
  readonly enter: number
  /** Fill ratio below which the level is left; in [0, `enter`). */
  readonly exit: number
}

/**
 * The watermarks of the three levels above `normal`.
 *
 * @group Watermarks
 */
export interface Watermarks {
  /** Marks of `warn`. @defaultValue `{ enter: 0.6, exit: 0.5 }` */
  readonly warn: Watermark
  /** Marks of `shed`. @defaultValue `{ enter: 0.8, exit: 0.7 }` */
  readonly shed: Watermark
  /** Marks of `reject`. @defaultValue `{ enter: 0.95, exit: 0.85 }` */
  readonly reject: Watermark
}

/**
 * The default marks: enter at 60 / 80 / 95 %, leave below 50 / 70 / 85 %.
 *
 * @remarks Warn at 60 %, shed low priority at 80 %, reject everything and trip the
 * breaker at 95 %. Each exit sits 10 points under its entry: wide enough that a queue hovering at a
 * mark does not flap, narrow enough that the level still follows a real recovery.
 *
 * @group Watermarks
 */
export const DEFAULT_WATERMARKS: Watermarks = Object.freeze({
  warn: Object.freeze({ enter: 0.6, exit: 0.5 }),
  shed: Object.freeze({ enter: 0.8, exit: 0.7 }),
  reject: Object.freeze({ enter: 0.95, exit: 0.85 }),
})
