/**
 * Guards handler runs with deadlines on a timing wheel: the factory of {@link Attempt}s, their
 * counters and the zombie list.
 *
 * @module
 */
import { systemTimers, type TimerProvider, WheelDriver } from '@flowing/timing-wheel'
import { Attempt, type TimeoutHandler, type ZombieHandler, type ZombieInfo } from './attempt.js'
import type { AttemptLabel } from './contracts.js'
import type { DeadlineScheduler } from './deadline-scheduler.js'
import { WatchdogArgumentError } from './errors.js'
import { WatchdogCore } from './internal/core.js'
import { DeadlineQueue } from './internal/deadline-queue.js'
import {
  checkKnownKeys,
  checkOptionalFunction,
  checkOptions,
  checkPositive,
  hasMethods,
  POSITIVE_RULE,
} from './internal/validate.js'

/**
 * Options of {@link Watchdog}; every one is validated.
 *
 * @group Watchdog
 */
export interface WatchdogOptions {
  /**
   * The clock (and, without a `scheduler`, the timers of the watchdog's own driver). Pass the loop's
   * clock — the same one its shared driver runs on.
   *
   * @defaultValue `systemTimers` of `@flowing/timing-wheel`
   */
  readonly timers?: TimerProvider
  /**
   * Run on a driver you own (a loop's one `WheelDriver`): deadlines are added to it, and you hand
   * every due {@link Attempt} back to {@link Watchdog.onDue}. Without it the watchdog creates its own
   * `WheelDriver` on `timers`.
   */
  readonly scheduler?: DeadlineScheduler<Attempt>
  /** Default timeout step callback; a guard's own `onTimeout` replaces it. */
  readonly onTimeout?: TimeoutHandler
  /**
   * How long a timed-out attempt may stay unsettled before it is a zombie, in ms: `0` (at once) or
   * more, `Infinity` for never.
   *
   * @defaultValue `5_000`
   */
  readonly graceMs?: number
  /** Called once per attempt that becomes a zombie. */
  readonly onZombie?: ZombieHandler
}

/**
 * Options of one {@link Watchdog.guard} call.
 *
 * @group Watchdog
 */
export interface GuardOptions {
  /** The hard timeout in ms, a finite number > 0: the attempt times out at `now + timeoutMs`, however often it beats. */
  readonly timeoutMs: number
  /**
   * Heartbeat timeout in ms, a finite number > 0: the attempt also times out when
   * {@link Attempt.heartbeat} was not called for this long. Omit for none.
   */
  readonly heartbeatMs?: number
  /** What is guarded, for errors and reports; a message object with `type`/`key`/`id` fits as is. */
  readonly label?: AttemptLabel | string
  /** This attempt's timeout callback, instead of the watchdog's default. */
  readonly onTimeout?: TimeoutHandler
  /**
   * A reading of the watchdog's clock the caller took just now (a finite number, never ahead of the
   * clock): the attempt starts then, and guarding reads no clock. Omit to let the watchdog read it.
   */
  readonly now?: number
  /**
   * Wait in the FIFO of this `timeoutMs` instead of holding a wheel entry of its own (ignored with a
   * `heartbeatMs`): attempts guarded `queued` with the same timeout have deadlines in guard order, so
   * only the FIFO's head holds a scheduler entry, and guard + settle cost a push and an O(1) mark
   * instead of a wheel add and remove. Outcomes, states, counters and timing are the same; the
   * scheduler holds one entry per timeout value in use (up to 8 values; more, or a deadline before
   * the FIFO's last one, use the wheel), and on a shared scheduler with `has()` that entry stays after
   * the last attempt settles, until it fires, so a steady stream does not re-arm per attempt.
   *
   * @defaultValue `false`: one wheel entry per attempt
   */
  readonly queued?: boolean
}

/**
 * The watchdog's counters; see {@link Watchdog.stats}.
 *
 * @group Watchdog
 */
export interface WatchdogStats {
  /** Attempts guarded. */
  readonly guarded: number
  /** Attempts running now. */
  readonly running: number
  /** Attempts whose outcome was `completed`. */
  readonly completed: number
  /** Attempts whose outcome was `failed`. */
  readonly failed: number
  /** Attempts whose outcome was `timed-out`. */
  readonly timedOut: number
  /** Attempts whose outcome was `cancelled`. */
  readonly cancelled: number
  /** Handlers that settled after their attempt lost to a timeout or a cancellation (each counted once). */
  readonly lateCompletions: number
  /** Effects refused by {@link Attempt.fence}. */
  readonly fencedEffects: number
  /** Zombies now. */
  readonly zombies: number
  /** Attempts that ever became zombies. */
  readonly zombiesTotal: number
}

const OPTION_KEYS = ['timers', 'scheduler', 'onTimeout', 'graceMs', 'onZombie'] as const
// FIFOs kept, one per timeout value (the first ones guarded); other values go on the wheel.
const MAX_QUEUES = 8

/**
 * Gives each handler run a deadline, an `AbortSignal`, a heartbeat and an epoch, and makes sure
 * exactly one outcome wins.
 *
 * @remarks
 * **Sharing a driver.** A loop keeps one `WheelDriver` for all its timers and passes it as
 * `scheduler`; in its `onDue` it routes each item with `Watchdog.owns(item)` to
 * {@link Watchdog.onDue}. Standalone, the watchdog makes its own driver.
 *
 * **Complexity.** `guard`, `done`, `fail`, `cancel`: O(1), one wheel add or remove — or, guarded
 * {@link GuardOptions.queued}, a push onto the FIFO of the timeout value and an amortized O(1) mark,
 * one scheduler entry per FIFO (see `docs/design/watchdog.md`). `heartbeat`:
 * O(1), no wheel operation. A heartbeat attempt costs one extra wheel add per heartbeat window in
 * which it beat. No list of running attempts is kept (that is the owner's; see
 * {@link Attempt.describe}).
 *
 * **Pre-emption.** A timeout aborts the signal and fences the attempt; it cannot stop JavaScript that
 * never yields (nothing can, on its own thread) — see `StallDetector`.
 *
 * @example
 * ```ts
 * import { Watchdog } from '@flowing/watchdog'
 *
 * const watchdog = new Watchdog()
 * const attempt = watchdog.guard({ timeoutMs: 1_000, label: { type: 'order.paid', key: 'o-1' } })
 * await new Promise((resolve) => setTimeout(resolve, 1)) // the handler's work
 * console.log(attempt.done(), attempt.state) // true 'completed'
 * ```
 *
 * @group Watchdog
 */
export class Watchdog {
  readonly #core: WatchdogCore<Attempt>
  // Only when standalone: the driver the watchdog made for itself.
  readonly #driver: WheelDriver<Attempt> | undefined
  // For `queued` guards without a heartbeat: one FIFO per timeout value, and the last one used.
  readonly #queues: DeadlineQueue<Attempt>[] = []
  #lastQueue: DeadlineQueue<Attempt> | undefined = undefined
  // Standalone or on a scheduler without `has()`: a FIFO removes its entry when its last attempt ends.
  readonly #disarmWhenIdle: boolean

  /**
   * @param options - see {@link WatchdogOptions}
   * @throws {@link WatchdogArgumentError} for a bad or unknown option
   */
  constructor(options: WatchdogOptions = {}) {
    checkOptions('options', options)
    checkKnownKeys('options', options, OPTION_KEYS)
    const timers = options.timers ?? systemTimers
    const standalone = options.scheduler === undefined
    if (!hasMethods(timers, standalone ? ['now', 'setTimeout', 'clearTimeout'] : ['now'])) {
      const rule = standalone ? 'an object with now(), setTimeout() and clearTimeout()' : 'an object with now()'
      throw new WatchdogArgumentError('options.timers', rule, timers)
    }
    if (!standalone && !hasMethods(options.scheduler, ['add', 'remove'])) {
      throw new WatchdogArgumentError('options.scheduler', 'an object with add() and remove()', options.scheduler)
    }
    const graceMs = options.graceMs ?? 5_000
    if (typeof graceMs !== 'number' || !(graceMs >= 0)) {
      throw new WatchdogArgumentError('options.graceMs', 'a number ≥ 0 (Infinity: never a zombie)', graceMs)
    }
    const onTimeout = checkOptionalFunction<TimeoutHandler>('options.onTimeout', options.onTimeout)
    const onZombie = checkOptionalFunction<ZombieHandler>('options.onZombie', options.onZombie)
    this.#core = new WatchdogCore<Attempt>(() => timers.now(), graceMs, onTimeout, onZombie)
    this.#driver = standalone ? new WheelDriver<Attempt>({ timers, onDue: deliver }) : undefined
    this.#core.scheduler = this.#driver ?? (options.scheduler as DeadlineScheduler<Attempt>)
    this.#disarmWhenIdle = standalone || !hasMethods(options.scheduler, ['has'])
  }

  /**
   * `true` when `item` is the watchdog's: an {@link Attempt}, or the FIFO of queued attempts of one
   * timeout value (typed as an attempt; only {@link Watchdog.onDue} reads it) — the routing test in a
   * shared driver's `onDue`.
   */
  static owns(item: unknown): item is Attempt {
    return item instanceof Attempt || item instanceof DeadlineQueue
  }

  /**
   * Starts guarding one run of a handler: arms its deadline and returns its token.
   *
   * @throws {@link WatchdogArgumentError} for a bad option (nothing armed, nothing counted)
   * @throws `WheelFullError` (from the timing wheel) when the scheduler is full
   */
  guard(options: GuardOptions): Attempt {
    if (typeof options !== 'object' || options === null) {
      throw new WatchdogArgumentError('options', 'an object with `timeoutMs`', options)
    }
    const timeoutMs = options.timeoutMs
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs === Number.POSITIVE_INFINITY) {
      throw new WatchdogArgumentError('timeoutMs', POSITIVE_RULE, timeoutMs)
    }
    const heartbeatMs = options.heartbeatMs === undefined ? 0 : checkPositive('heartbeatMs', options.heartbeatMs)
    const onTimeout = options.onTimeout
    if (onTimeout !== undefined && typeof onTimeout !== 'function') {
      throw new WatchdogArgumentError('onTimeout', 'a function', onTimeout)
    }
    const now = options.now
    if (now !== undefined && !(typeof now === 'number' && Number.isFinite(now))) {
      throw new WatchdogArgumentError('now', 'a finite clock reading in ms', now)
    }
    const core = this.#core
    const queue = options.queued === true && heartbeatMs === 0 ? this.#queueFor(timeoutMs) : undefined
    const attempt = new Attempt(core, timeoutMs, heartbeatMs, options.label, onTimeout, now ?? core.now(), queue)
    core.guarded++
    core.running++
    return attempt
  }

  /** The FIFO of `timeoutMs`, made on first use while fewer than {@link MAX_QUEUES} exist. */
  #queueFor(timeoutMs: number): DeadlineQueue<Attempt> | undefined {
    const last = this.#lastQueue
    if (last !== undefined && last.timeoutMs === timeoutMs) return last
    let queue = this.#queues.find((q) => q.timeoutMs === timeoutMs)
    if (queue === undefined) {
      if (this.#queues.length >= MAX_QUEUES) return undefined
      const core = this.#core
      queue = new DeadlineQueue<Attempt>(timeoutMs, core.scheduler, core.now, this.#disarmWhenIdle)
      this.#queues.push(queue)
    }
    this.#lastQueue = queue
    return queue
  }

  /**
   * Hands a due item back: call it from a shared driver's `onDue` for every item
   * {@link Watchdog.owns} claims. Times the attempt out (or re-arms it for a newer heartbeat), or
   * makes a timed-out one a zombie when its grace period is over.
   */
  onDue(attempt: Attempt): void {
    attempt._fire()
  }

  /** Attempts running now. */
  get running(): number {
    return this.#core.running
  }

  /** Zombies now: timed-out attempts unsettled past `graceMs`. */
  get zombieCount(): number {
    return this.#core.zombies.size
  }

  /** Handlers that settled after losing to a timeout or a cancellation, each counted once. */
  get lateCompletions(): number {
    return this.#core.lateCompletions
  }

  /** Timers pending on the watchdog's own driver; `undefined` when it runs on a shared scheduler. */
  get pendingTimers(): number | undefined {
    return this.#driver?.size
  }

  /** The zombies, oldest timeout first, with their age (since guard) at `now()`. */
  zombies(): ZombieInfo[] {
    const now = this.#core.now()
    return [...this.#core.zombies].map((attempt) => ({
      epoch: attempt.epoch,
      label: attempt.label,
      ageMs: now - attempt.startedAt,
      attempt,
    }))
  }

  /** The counters; see {@link WatchdogStats}. */
  stats(): WatchdogStats {
    const c = this.#core
    return {
      guarded: c.guarded,
      running: c.running,
      completed: c.completed,
      failed: c.failed,
      timedOut: c.timedOut,
      cancelled: c.cancelled,
      lateCompletions: c.lateCompletions,
      fencedEffects: c.fencedEffects,
      zombies: c.zombies.size,
      zombiesTotal: c.zombiesTotal,
    }
  }
}

/** The own driver's `onDue`: every item gets its turn even if an `onTimeout` throws; the first error is rethrown. */
function deliver(items: Attempt[]): void {
  let failure: { error: unknown } | undefined
  for (const attempt of items) {
    try {
      attempt._fire()
    } catch (error) {
      failure ??= { error }
    }
  }
  if (failure !== undefined) throw failure.error
}
