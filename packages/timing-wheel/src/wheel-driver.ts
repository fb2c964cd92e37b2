/**
 * A {@link TimingWheel} driven by real time: one real timer armed for the next deadline, due items
 * delivered in batches.
 *
 * @module
 */
import { WheelArgumentError } from './errors.js'
import {
  checkFunction,
  checkKnownKeys,
  checkLimit,
  checkOptions,
  DELAY_RULE,
  isDelay,
  isTime,
  TIME_RULE,
} from './internal/validate.js'
import { Timeout, type TimerOwner } from './timeout.js'
import { systemTimers, type TimerProvider } from './timer-provider.js'
import { TimingWheel, type TimingWheelStats } from './timing-wheel.js'

/**
 * Options of {@link WheelDriver}. Only `onDue` is required; every option is validated.
 *
 * @group Driver
 */
export interface WheelDriverOptions<T> {
  /**
   * Receives the due items, in deadline order, at most `budget` per wake-up (one or more calls: the
   * driver reads the clock again after each call). Should not throw: if it does, the driver re-arms
   * and rethrows (to the event loop, as an uncaught exception), and the items of that call are gone
   * from the wheel.
   */
  readonly onDue: (items: T[]) => void
  /**
   * Clock and timers. Pass `@flowing/core`'s loop clock (or its `VirtualClock` in tests).
   *
   * @defaultValue {@link systemTimers}
   */
  readonly timers?: TimerProvider
  /** See {@link TimingWheelOptions.tickMs}. @defaultValue `1` */
  readonly tickMs?: number
  /** See {@link TimingWheelOptions.maxPending}. @defaultValue `1_000_000` */
  readonly maxPending?: number
  /**
   * Most items delivered per wake-up (event-loop turn), a positive integer or `Infinity`. When more
   * are due, the rest follow on the next turn (`setImmediate`), so a burst of due timers cannot
   * starve I/O. They stay pending — and cancellable — until delivered.
   *
   * @defaultValue `1024`
   */
  readonly budget?: number
  /**
   * Unref the real timer, so pending timers alone do not keep the process alive.
   *
   * @defaultValue `false`
   */
  readonly unref?: boolean
}

/**
 * {@link TimingWheelStats} plus the driver's wake-ups.
 *
 * @group Driver
 */
export interface WheelDriverStats extends TimingWheelStats {
  /** Real timer callbacks and budget continuations run. */
  readonly wakeups: number
  /**
   * Wake-ups that delivered nothing: the real timer fired before the deadline (Node's timers may
   * fire up to ~1 ms early), or the earliest timer had been cancelled.
   */
  readonly emptyWakeups: number
}

const OPTION_KEYS = ['onDue', 'timers', 'tickMs', 'maxPending', 'budget', 'unref'] as const
/** Longest delay `setTimeout` accepts (2^31 − 1 ms, 24.8 days); longer waits re-arm on wake-up. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Keeps exactly one real timer armed for the earliest pending deadline (none while the wheel is
 * empty), advances the wheel when it fires and hands the due items to `onDue`.
 *
 * @remarks
 * **Never early.** A real timer may fire early (Node's do, by up to ~1 ms); the driver advances the
 * wheel to its clock's `now()`, so an item is delivered only once its deadline has passed, and
 * re-arms if nothing was due yet. Lateness: the timer's own lateness plus the time the event loop
 * was busy, plus up to 1 ms when an early wake-up forces a re-arm.
 *
 * **Arming.** Scheduling re-arms only when the new deadline is earlier than the armed one (a
 * `clearTimeout` + `setTimeout`); cancelling disarms only when the wheel becomes empty — a cancelled
 * earliest timer costs at most one wake-up that delivers nothing, cheaper than re-arming per cancel.
 * Deadlines beyond 24.8 days are reached in steps, never by an overflowing `setTimeout`.
 *
 * **Budget.** At most `budget` items per wake-up; when more are due the rest follow via
 * `setImmediate`, so I/O runs in between. After each `onDue` call the driver reads the clock again
 * and delivers what fell due meanwhile — including timers `onDue` scheduled that are due at once —
 * in the same turn while the budget lasts, on a later turn otherwise; never lost.
 *
 * @typeParam T - the item type
 *
 * @example
 * ```ts
 * import { WheelDriver } from '@flowing/timing-wheel'
 *
 * const delivered = new Promise<string[]>((resolve) => {
 *   const driver = new WheelDriver<string>({ onDue: resolve })
 *   driver.schedule(5, 'close order o-1')
 * })
 * console.log(await delivered) // ['close order o-1'], not before 5 ms have passed
 * ```
 *
 * @group Driver
 */
export class WheelDriver<T> implements TimerOwner {
  readonly #wheel: TimingWheel<T>
  readonly #timers: TimerProvider
  readonly #onDue: (items: T[]) => void
  readonly #budget: number
  readonly #unref: boolean
  // The armed real timer, if any, and the deadline it is for (Infinity: none armed).
  #handle: unknown
  #armedAt = Number.POSITIVE_INFINITY
  // A continuation (setImmediate) is queued: it will advance and re-arm, so nothing else arms.
  #continuing = false
  // Inside #run: onDue may schedule, and #run re-arms once at the end instead of per schedule.
  #running = false
  // Bumped by clear(): a continuation queued before it must not run (setImmediate has no cancel).
  #epoch = 0
  #wakeups = 0
  #emptyWakeups = 0
  // Allocated once: the real timer's callback.
  readonly #onTimer = (): void => {
    this.#handle = undefined
    this.#armedAt = Number.POSITIVE_INFINITY
    this.#run()
  }

  /**
   * @param options - see {@link WheelDriverOptions}
   * @throws {@link WheelArgumentError} for a missing `onDue`, a bad option or an unknown option name
   */
  constructor(options: WheelDriverOptions<T>) {
    checkOptions('options', options)
    if (options === undefined) throw new WheelArgumentError('options', 'an options object with `onDue`', options)
    checkKnownKeys('options', options, OPTION_KEYS)
    this.#onDue = checkFunction('options.onDue', options.onDue)
    this.#timers = checkTimers(options.timers ?? systemTimers)
    this.#budget = checkLimit('options.budget', options.budget ?? 1024)
    const unref = options.unref ?? false
    if (typeof unref !== 'boolean') throw new WheelArgumentError('options.unref', 'a boolean', unref)
    this.#unref = unref
    const timers = this.#timers
    this.#wheel = new TimingWheel<T>({
      now: () => timers.now(),
      ...(options.tickMs === undefined ? {} : { tickMs: options.tickMs }),
      ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending }),
    })
  }

  /** Timers pending now. */
  get size(): number {
    return this.#wheel.size
  }

  /** The bound on pending timers. */
  get maxPending(): number {
    return this.#wheel.maxPending
  }

  /** The deadline the real timer is armed for, or `undefined` when none is armed. */
  get armedDeadline(): number | undefined {
    return this.#armedAt === Number.POSITIVE_INFINITY ? undefined : this.#armedAt
  }

  /** Schedules `item` at `now() + delayMs`; see {@link TimingWheel.schedule}. */
  schedule(delayMs: number, item: T): Timeout<T> {
    if (!isDelay(delayMs)) throw new WheelArgumentError('delayMs', DELAY_RULE, delayMs)
    const now = this.#timers.now()
    if (!isTime(now)) throw new WheelArgumentError('now()', TIME_RULE, now)
    const deadline = now + delayMs
    return new Timeout(this, this.add(deadline, item), deadline, item)
  }

  /** Schedules `item` at the absolute time `at`; see {@link TimingWheel.scheduleAt}. */
  scheduleAt(at: number, item: T): Timeout<T> {
    if (!isTime(at)) throw new WheelArgumentError('at', TIME_RULE, at)
    return new Timeout(this, this.add(at, item), at, item)
  }

  /** Lean API: schedules at `deadline` and returns a timer id; see {@link TimingWheel.add}. */
  add(deadline: number, item: T): number {
    const id = this.#wheel.add(deadline, item)
    if (deadline < this.#armedAt && !this.#running && !this.#continuing) this.#arm(deadline)
    return id
  }

  /** Cancels timer `id`; disarms the real timer when nothing is left. See {@link TimingWheel.remove}. */
  remove(id: number): boolean {
    if (!this.#wheel.remove(id)) return false
    if (this.#wheel.size === 0 && !this.#running) this.#disarm()
    return true
  }

  /** `true` while timer `id` is pending. */
  has(id: number): boolean {
    return this.#wheel.has(id)
  }

  /** The earliest pending deadline, or `undefined`. */
  nextDeadline(): number | undefined {
    return this.#wheel.nextDeadline()
  }

  /**
   * Disarms and cancels every pending timer; returns their items in deadline order (a shutdown
   * snapshot). The driver stays usable: the next schedule arms again.
   */
  clear(): T[] {
    this.#epoch++
    this.#continuing = false
    this.#disarm()
    return this.#wheel.clear()
  }

  /** The wheel's totals plus wake-ups; see {@link WheelDriverStats}. */
  stats(): WheelDriverStats {
    return { ...this.#wheel.stats(), wakeups: this.#wakeups, emptyWakeups: this.#emptyWakeups }
  }

  /**
   * One wake-up: deliver what is due (within budget), reading the clock again after each batch so
   * timers that fell due meanwhile go out in this turn too; then arm for what remains.
   */
  #run(): void {
    this.#wakeups++
    this.#running = true
    try {
      let delivered = 0
      while (delivered < this.#budget) {
        const items = this.#wheel.advance(this.#timers.now(), this.#budget - delivered)
        if (items.length === 0) break
        delivered += items.length
        this.#onDue(items)
      }
      if (delivered === 0) this.#emptyWakeups++
    } finally {
      this.#running = false
      this.#arm(this.#wheel.nextDeadline())
    }
  }

  /** Arms the one real timer for `deadline` (replacing any), or a continuation if already due. */
  #arm(deadline: number | undefined): void {
    this.#disarm()
    if (deadline === undefined || this.#continuing) return
    const wait = deadline - this.#timers.now()
    if (wait <= 0) {
      this.#continue()
      return
    }
    this.#armedAt = deadline
    // Whole ms, rounded up: Node truncates fractions, which would only add an empty wake-up.
    this.#handle = this.#timers.setTimeout(this.#onTimer, Math.min(Math.ceil(wait), MAX_TIMER_MS))
    if (this.#unref) unrefTimer(this.#handle)
  }

  #disarm(): void {
    if (this.#handle !== undefined) this.#timers.clearTimeout(this.#handle)
    this.#handle = undefined
    this.#armedAt = Number.POSITIVE_INFINITY
  }

  /** Queues a run on the next turn: due items are waiting (budget exhausted, or due already). */
  #continue(): void {
    this.#continuing = true
    const epoch = this.#epoch
    const run = (): void => {
      if (epoch !== this.#epoch) return
      this.#continuing = false
      this.#run()
    }
    if (this.#timers.setImmediate === undefined) unrefIf(this.#unref, this.#timers.setTimeout(run, 0))
    else this.#timers.setImmediate(run)
  }
}

function checkTimers(timers: unknown): TimerProvider {
  const t = timers as Partial<Record<keyof TimerProvider, unknown>> | null
  const ok =
    typeof t === 'object' &&
    t !== null &&
    typeof t.now === 'function' &&
    typeof t.setTimeout === 'function' &&
    typeof t.clearTimeout === 'function' &&
    (t.setImmediate === undefined || typeof t.setImmediate === 'function')
  if (!ok) {
    throw new WheelArgumentError(
      'options.timers',
      'an object with now(), setTimeout(), clearTimeout() and optionally setImmediate()',
      timers,
    )
  }
  return timers as TimerProvider
}

function unrefTimer(handle: unknown): void {
  const unref = (handle as { unref?: unknown } | null)?.unref
  if (typeof unref === 'function') unref.call(handle)
}

function unrefIf(unref: boolean, handle: unknown): void {
  if (unref) unrefTimer(handle)
}
