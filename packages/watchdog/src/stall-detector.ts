/**
 * Detects a process that is alive but does not move: an event loop blocked past a threshold, or no
 * progress while work is waiting.
 *
 * @module
 */
import { systemTimers, type TimerProvider } from '@flowing/timing-wheel'
import type { AttemptSnapshot } from './contracts.js'
import { WatchdogArgumentError } from './errors.js'
import { checkKnownKeys, checkOptionalFunction, checkOptions, checkPositive, hasMethods } from './internal/validate.js'

/**
 * What a stall report is about: `blocked` and `no-progress` come from a {@link StallDetector};
 * `saturated` from a worker pool that watches its own slots (every worker busy past a threshold with
 * one attempt while work waits — e.g. `@flowing/core`'s loop, by default).
 *
 * @group Stall detector
 */
export type StallKind = 'blocked' | 'no-progress' | 'saturated'

/**
 * Passed to `onStall`: the kind, the measured numbers and what was running.
 *
 * @group Stall detector
 */
export interface StallReport {
  /**
   * `blocked`: a check ran late by `lagMs`; `no-progress`: no `progress()` for `sinceProgressMs` while
   * busy; `saturated`: every worker has run the same attempt for at least `sinceProgressMs` (no worker
   * started anything since) while work waits.
   */
  readonly kind: StallKind
  /** When the stall was noticed, on the detector's clock. */
  readonly at: number
  /** How late the check ran, in ms (`0` for `saturated`). */
  readonly lagMs: number
  /** Time since the last `progress()` (or since work started waiting; for `saturated`: since the youngest running attempt started), in ms. */
  readonly sinceProgressMs: number
  /** The threshold that was crossed: `blockedMs`, `noProgressMs`, or the saturation threshold. */
  readonly thresholdMs: number
  /** What `describeRunning()` returned (empty without it); for `saturated`, the attempts holding the workers. */
  readonly running: readonly AttemptSnapshot[]
}

/**
 * Options of {@link StallDetector}; every one is validated.
 *
 * @group Stall detector
 */
export interface StallDetectorOptions {
  /** Receives each stall report. Should not throw. */
  readonly onStall: (report: StallReport) => void
  /** Clock and timers. @defaultValue `systemTimers` of `@flowing/timing-wheel` */
  readonly timers?: TimerProvider
  /** Period of the check, in ms. @defaultValue `100` */
  readonly intervalMs?: number
  /** A check running this much later than planned reports `blocked`, in ms. @defaultValue `200` */
  readonly blockedMs?: number
  /**
   * Reports `no-progress` when `busy()` held and `progress()` was not called for this long, in ms
   * (again every `noProgressMs` while it lasts). @defaultValue `30_000`
   */
  readonly noProgressMs?: number
  /** `true` while work is waiting (e.g. queue not empty). Without it, `no-progress` is never reported. */
  readonly busy?: () => boolean
  /** The running attempts for the report (ids, labels, ages) — e.g. `attempt.describe()` of each. */
  readonly describeRunning?: () => readonly AttemptSnapshot[]
}

/**
 * The detector's counters; see {@link StallDetector.stats}.
 *
 * @group Stall detector
 */
export interface StallDetectorStats {
  /** Checks run. */
  readonly checks: number
  /** `blocked` reports. */
  readonly blocked: number
  /** `no-progress` reports. */
  readonly noProgress: number
  /** The largest lag measured, in ms. */
  readonly maxLagMs: number
}

const OPTION_KEYS = ['onStall', 'timers', 'intervalMs', 'blockedMs', 'noProgressMs', 'busy', 'describeRunning']

/**
 * A repeating check on the provider's timers that reports a blocked event loop (the check ran late)
 * and a loop that makes no progress while work is waiting.
 *
 * @remarks
 * **What it cannot do.** JavaScript that never yields — a synchronous spin, a catastrophic regex, a
 * huge `JSON.parse` — cannot be pre-empted on its own thread: no timer, signal or watchdog runs until
 * it returns. The detector reports it afterwards (as a late check, with the running attempts), it
 * does not stop it. For CPU-bound handlers: run them in `worker_threads` (e.g. through piscina, whose
 * timeout terminates the thread), or break the work into chunks that yield with `setImmediate` and
 * check `signal.aborted` between chunks.
 *
 * **Cost.** One real timer per `intervalMs` while started; none after `stop()`.
 *
 * @example
 * ```ts
 * import { StallDetector } from '@flowing/watchdog'
 *
 * const detector = new StallDetector({ onStall: (report) => console.log(report.kind, report.lagMs) })
 * detector.start()
 * detector.stop() // clears its timer: nothing keeps the process alive
 * ```
 *
 * @group Stall detector
 */
export class StallDetector {
  readonly #timers: TimerProvider
  readonly #onStall: (report: StallReport) => void
  readonly #intervalMs: number
  readonly #blockedMs: number
  readonly #noProgressMs: number
  readonly #busy: (() => boolean) | undefined
  readonly #describeRunning: (() => readonly AttemptSnapshot[]) | undefined
  // The armed check and when it should run (lag = actual − expected).
  #handle: unknown = undefined
  #expected = 0
  // Start of the current no-progress window: last progress, last idle check, or last report.
  #since = 0
  #checks = 0
  #blocked = 0
  #noProgress = 0
  #maxLagMs = 0
  // Allocated once: the timer callback.
  readonly #onTimer = (): void => {
    this.#handle = undefined
    this.#check()
  }

  /**
   * @param options - see {@link StallDetectorOptions}
   * @throws {@link WatchdogArgumentError} for a missing `onStall`, a bad or an unknown option
   */
  constructor(options: StallDetectorOptions) {
    checkOptions('options', options)
    if (options === undefined) throw new WatchdogArgumentError('options', 'an options object with `onStall`', options)
    checkKnownKeys('options', options, OPTION_KEYS)
    if (typeof options.onStall !== 'function') {
      throw new WatchdogArgumentError('options.onStall', 'a function', options.onStall)
    }
    this.#onStall = options.onStall
    const timers = options.timers ?? systemTimers
    if (!hasMethods(timers, ['now', 'setTimeout', 'clearTimeout'])) {
      throw new WatchdogArgumentError('options.timers', 'an object with now(), setTimeout() and clearTimeout()', timers)
    }
    this.#timers = timers
    this.#intervalMs = checkPositive('options.intervalMs', options.intervalMs ?? 100)
    this.#blockedMs = checkPositive('options.blockedMs', options.blockedMs ?? 200)
    this.#noProgressMs = checkPositive('options.noProgressMs', options.noProgressMs ?? 30_000)
    this.#busy = checkOptionalFunction('options.busy', options.busy)
    this.#describeRunning = checkOptionalFunction('options.describeRunning', options.describeRunning)
  }

  /** `true` between `start()` and `stop()`. */
  get started(): boolean {
    return this.#handle !== undefined
  }

  /** Starts the periodic check (no-op when started). */
  start(): void {
    if (this.#handle !== undefined) return
    this.#since = this.#timers.now()
    this.#arm()
  }

  /** Stops and clears the timer: a stopped detector holds no timer. */
  stop(): void {
    if (this.#handle === undefined) return
    this.#timers.clearTimeout(this.#handle)
    this.#handle = undefined
  }

  /** Records progress (a message completed): restarts the no-progress window. O(1). */
  progress(): void {
    this.#since = this.#timers.now()
  }

  /** The counters; see {@link StallDetectorStats}. */
  stats(): StallDetectorStats {
    return { checks: this.#checks, blocked: this.#blocked, noProgress: this.#noProgress, maxLagMs: this.#maxLagMs }
  }

  #arm(): void {
    this.#expected = this.#timers.now() + this.#intervalMs
    this.#handle = this.#timers.setTimeout(this.#onTimer, this.#intervalMs)
  }

  /** One check: measure the lag, look at progress, re-arm (before reporting, so a throwing onStall cannot stop it). */
  #check(): void {
    const now = this.#timers.now()
    const lagMs = Math.max(0, now - this.#expected)
    this.#checks++
    if (lagMs > this.#maxLagMs) this.#maxLagMs = lagMs
    this.#arm()
    const busy = this.#busy?.() ?? false
    if (!busy) this.#since = now
    const sinceProgressMs = now - this.#since
    if (lagMs >= this.#blockedMs) {
      this.#blocked++
      this.#report('blocked', now, lagMs, sinceProgressMs, this.#blockedMs)
    }
    if (busy && sinceProgressMs >= this.#noProgressMs) {
      this.#noProgress++
      this.#since = now
      this.#report('no-progress', now, lagMs, sinceProgressMs, this.#noProgressMs)
    }
  }

  #report(kind: StallKind, at: number, lagMs: number, sinceProgressMs: number, thresholdMs: number): void {
    const running = this.#describeRunning?.() ?? []
    this.#onStall({ kind, at, lagMs, sinceProgressMs, thresholdMs, running })
  }
}
