/**
 * De-noised dead-letter alerts (seed 001 §5.3): never one alert per dead letter. Per message type, an
 * alert fires when the dead letters of the last window reach a threshold, and then at most once per
 * window, carrying the counts and the top error signatures. A new signature is logged once, when first
 * seen.
 *
 * The letters a window suppressed are summarised by one timer on the loop's clock, due when the window
 * allows (one window after the previous alert of the type) — not at the next letter, not only at
 * `stop()`. By then the sliding window may have let them go (a burst at t = 0 has left a 60 s window at
 * t = 60 s), so the timer does not re-check the window: they reached the threshold when they came, and
 * the alert reports them in `sinceLastAlert`. At most one timer per type, armed by a letter and never
 * re-armed by its own firing; `flush()` (the loop's stop) clears them all, and after it no timer is armed.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { AlertOptions, DeadLetterAlert } from '../contracts/failures.js'
import { rethrowLater } from '../internal/loop-emitter.js'
import { SlidingWindow } from './sliding-window.js'

const MAX_SIGNATURES = 10_000

interface TypeWindow {
  // Dead letters of the type in the last window.
  readonly recent: SlidingWindow
  total: number
  // Signatures since the previous alert, with counts (distinct signatures, so a storm costs no memory).
  readonly sinceLast: Map<string, number>
  sinceLastCount: number
  lastAlertAt: number
  timer: TimerHandle | undefined
}

/** The alert de-noiser and the first-seen signature log. */
export class Alerts {
  readonly #windowMs: number
  readonly #threshold: number
  readonly #top: number
  readonly #clock: Clock
  readonly #emit: (alert: DeadLetterAlert) => void
  readonly #types = new Map<string, TypeWindow>()
  readonly #seen = new Set<string>()
  // Set by flush(): the loop stopped, so nothing may wait on a timer (it would keep the process alive).
  #flushed = false

  /**
   * @param options - validated options
   * @param clock - the loop's clock
   * @param emit - delivers an alert
   */
  constructor(options: AlertOptions, clock: Clock, emit: (alert: DeadLetterAlert) => void) {
    this.#windowMs = options.windowMs ?? 60_000
    this.#threshold = options.threshold ?? 1
    this.#top = options.top ?? 3
    this.#clock = clock
    this.#emit = emit
  }

  /** True the first time `signature` is seen for `type` (bounded: past 10 000 pairs, nothing is new). */
  isNew(type: string, signature: string): boolean {
    const pair = `${type}\u0000${signature}`
    if (this.#seen.has(pair) || this.#seen.size >= MAX_SIGNATURES) return false
    this.#seen.add(pair)
    return true
  }

  /** Records a dead letter; alerts now if due, or arms the one timer that alerts when the window allows. */
  record(type: string, signature: string): void {
    const now = this.#clock.now()
    let w = this.#types.get(type)
    if (w === undefined) {
      w = {
        recent: new SlidingWindow(this.#windowMs),
        total: 0,
        sinceLast: new Map(),
        sinceLastCount: 0,
        lastAlertAt: Number.NEGATIVE_INFINITY,
        timer: undefined,
      }
      this.#types.set(type, w)
    }
    w.recent.record(now, true)
    w.total++
    w.sinceLast.set(signature, (w.sinceLast.get(signature) ?? 0) + 1)
    w.sinceLastCount++
    this.#consider(type, w, now)
  }

  /** Alerts what was not alerted yet (the loop stops) and clears the timers; later letters alert at once. */
  flush(): void {
    this.#flushed = true
    for (const [type, w] of this.#types) {
      if (w.timer !== undefined) this.#clock.clearTimeout(w.timer)
      w.timer = undefined
      if (w.sinceLastCount > 0) this.#fire(type, w, this.#clock.now(), 'stop')
    }
  }

  #consider(type: string, w: TypeWindow, now: number): void {
    if (this.#flushed) {
      this.#fire(type, w, now, 'stop')
      return
    }
    if (w.timer !== undefined || w.recent.events(now) < this.#threshold) return
    const wait = w.lastAlertAt + this.#windowMs - now
    if (wait <= 0) {
      this.#fire(type, w, now, 'window')
      return
    }
    // Armed only when the threshold is reached: the letters since the last alert are due a summary, even
    // if they left the window meanwhile (re-checking it here lost a burst until the next letter).
    w.timer = this.#clock.setTimeout(() => {
      w.timer = undefined
      if (w.sinceLastCount > 0) this.#fire(type, w, this.#clock.now(), 'window')
    }, wait)
  }

  #fire(type: string, w: TypeWindow, at: number, reason: DeadLetterAlert['reason']): void {
    const topSignatures = [...w.sinceLast]
      .sort((a, b) => b[1] - a[1])
      .slice(0, this.#top)
      .map(([signature, count]) => ({ signature, count }))
    const alert: DeadLetterAlert = {
      type,
      at,
      windowMs: this.#windowMs,
      inWindow: w.recent.events(at),
      sinceLastAlert: w.sinceLastCount,
      total: w.total,
      topSignatures,
      reason,
    }
    w.sinceLast.clear()
    w.sinceLastCount = 0
    w.lastAlertAt = at
    this.#emit(alert)
  }
}

/**
 * The loop's alerts: each one counted in `metrics.alerts`, handed to the `onAlert` option (what it
 * throws is reported, never in the loop's way) and emitted as `alert`.
 */
export function newAlerts(
  options: AlertOptions,
  clock: Clock,
  metrics: { alerts: number },
  events: { emit(event: 'alert', alert: DeadLetterAlert): unknown },
): Alerts {
  return new Alerts(options, clock, (alert) => {
    metrics.alerts++
    try {
      options.onAlert?.(alert)
    } catch (error) {
      rethrowLater(error) // as a throwing listener's
    }
    events.emit('alert', alert)
  })
}
