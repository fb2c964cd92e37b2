/**
 * The throttle a downstream's "too many requests" puts on a route: after the retry-after pause, the
 * route restarts slowly and finds the downstream's rate again (additive increase, multiplicative
 * decrease, as TCP finds a link's).
 *
 * ```
 *  429 ─▶ pause (retry-after) ─▶ 1 start per second ─(250 ms with a message waiting)─▶ × 2 …
 *  429 again ─▶ × 0.7 (once a second: the refusals of one window are one signal),
 *               from then on + 5 % per busy 250 ms
 *  10 s with nothing waiting ─▶ gone: the route flows freely again
 * ```
 *
 * @module
 */
import type { SlidingWindow } from './rate-limit.js'

/** The throttle's window: its allowance is a number of starts per second. */
export const THROTTLE_WINDOW_MS = 1000
/** How often the allowance moves. */
export const THROTTLE_STEP_MS = 250
// Steps in a row with nothing waiting before the throttle goes (10 s).
const CALM_STEPS = 40
const DECREASE = 0.7
const INCREASE = 0.05
const MAX_ALLOWANCE = 1_000_000

/** One route's throttle: it sets the allowance of the route's retry-after window. */
export class Throttle {
  readonly #window: SlidingWindow
  #allowance = 1
  // Slow start (doubling) until the downstream refused again.
  #slowStart = true
  #stepEnd: number
  #busy = false
  // The last cut (or the first 429): refusals within a window of it answer calls made before it.
  #cutAt: number
  #calm = 0

  /** A first 429 at `now`: one start per second once the pause is over. */
  constructor(window: SlidingWindow, now: number) {
    this.#window = window
    window.resize(1)
    this.#stepEnd = now + THROTTLE_STEP_MS
    this.#cutAt = now
  }

  /** Starts allowed per second now. */
  get allowance(): number {
    return this.#allowance
  }

  /** When the allowance may next grow (a wake-up for waiting messages). */
  get nextStep(): number {
    return this.#stepEnd
  }

  /**
   * Another 429 at `now`: the allowance is cut by 30 % and slow start ends — unless the last cut is
   * less than a window old (the provider is still refusing the calls made before it).
   */
  refused(now: number): void {
    this.step(now, 0)
    this.#calm = 0
    if (now < this.#cutAt + THROTTLE_WINDOW_MS) return
    this.#cutAt = now
    this.#slowStart = false
    this.#set(Math.max(1, Math.floor(this.#allowance * DECREASE)))
  }

  /** A message waits for the throttle: the allowance binds in this step. */
  waited(): void {
    this.#busy = true
  }

  /**
   * Moves the allowance through the steps that ended by `now` (`waiting`: messages waiting for it
   * now); true once nothing has waited for it for 10 s: the throttle can go.
   */
  step(now: number, waiting: number): boolean {
    if (now < this.#stepEnd) return false
    const steps = 1 + Math.floor((now - this.#stepEnd) / THROTTLE_STEP_MS)
    if (this.#busy || waiting > 0) {
      // Grown once however late this is read (and not for a step spent paused).
      if (this.#window.pausedUntil < this.#stepEnd) this.#grow()
      this.#calm = 0
    } else if (this.#window.pausedUntil <= now) this.#calm += steps
    this.#stepEnd += steps * THROTTLE_STEP_MS
    this.#busy = false
    return this.#calm >= CALM_STEPS
  }

  #grow(): void {
    const a = this.#allowance
    this.#set(this.#slowStart ? 2 * a : a + Math.max(1, Math.round(a * INCREASE)))
  }

  #set(allowance: number): void {
    this.#allowance = Math.min(MAX_ALLOWANCE, allowance)
    this.#window.resize(this.#allowance)
  }
}
