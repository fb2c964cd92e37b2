/**
 * The hierarchical hashed timing wheel (Varghese & Lauck 1987, scheme 7): O(1) schedule and cancel,
 * due items returned in deadline order, never early.
 *
 * @module
 */
import { WheelArgumentError, WheelFullError } from './errors.js'
import {
  checkCount,
  checkFunction,
  checkKnownKeys,
  checkLimit,
  checkOptions,
  checkTime,
  DELAY_RULE,
  isDelay,
  isTime,
  MAX_PENDING_LIMIT,
  TIME_RULE,
} from './internal/validate.js'
import { WheelCore } from './internal/wheel-core.js'
import { Timeout, type TimerOwner } from './timeout.js'

/**
 * Options of {@link TimingWheel}. Every option is optional and validated.
 *
 * @group Timing wheel
 */
export interface TimingWheelOptions {
  /**
   * The clock: milliseconds on a monotonic timeline (fractional allowed), never negative.
   * `schedule()` adds delays to it and `advance()` reads it when called without an argument.
   *
   * @defaultValue `() => performance.now()`
   */
  readonly now?: () => number
  /**
   * Width of one slot of the lowest level, in ms: from 0.001 to 3,600,000. It sets the bucketing only
   * — firing compares exact deadlines — so it trades slot visits (fewer with coarser ticks) against
   * sorting within a slot (more timers per slot).
   *
   * @defaultValue `1`
   */
  readonly tickMs?: number
  /**
   * Bound on pending timers, from 1 to 16,000,000; one more is refused with {@link WheelFullError}.
   * Node storage grows with the high-water mark of pending timers (about 40 B each) and is kept.
   *
   * @defaultValue `1_000_000`
   */
  readonly maxPending?: number
}

/**
 * Running totals of a wheel, for metrics and tests.
 *
 * @group Timing wheel
 */
export interface TimingWheelStats {
  /** Timers pending now. */
  readonly pending: number
  /** Timers ever scheduled. `scheduled = pending + fired + cancelled + cleared`. */
  readonly scheduled: number
  /** Timers returned by `advance()`. */
  readonly fired: number
  /** Timers cancelled while pending (stale cancels are not counted). */
  readonly cancelled: number
  /** Timers removed by `clear()`. */
  readonly cleared: number
  /** Moves of a timer from a higher level (or the overflow list) to a lower one; at most one per level per timer. */
  readonly cascaded: number
  /**
   * Non-empty slots `advance()` processed. Empty slots are never visited, so after a stall of any
   * length this grows with the timers due, not with the ticks elapsed.
   */
  readonly slotsVisited: number
  /** Timer nodes the storage holds without growing (its high-water mark). */
  readonly capacity: number
}

const OPTION_KEYS = ['now', 'tickMs', 'maxPending'] as const
const MIN_TICK_MS = 0.001
const MAX_TICK_MS = 3_600_000
const systemNow = (): number => performance.now()

/**
 * A hierarchical hashed timing wheel: seven levels of 256 slots, a slot of level `i` being `256^i`
 * ticks wide, aligned to absolute time. Schedule and cancel are O(1); `advance(now)` returns the due
 * items in deadline order. It owns no real timer — call {@link TimingWheel.advance} yourself, or let
 * a {@link WheelDriver} do it.
 *
 * @remarks
 * **Accuracy contract.** `advance(now)` returns exactly the pending items whose deadline is ≤ `now`
 * — never one that is not yet due (never early), and never later than the first `advance` at or
 * after the deadline (zero ticks late relative to `advance`; the tick only sets the bucketing).
 * Order: by deadline, ties in schedule order. A deadline in the past is due at the next advance. Any
 * delay from 0 to `Number.MAX_SAFE_INTEGER` ms works: no 24.8-day limit as with `setTimeout`.
 *
 * **Sizing.** Each pending timer takes a 12 B node record (generation, slot, position), a 12 B
 * entry in its slot's vectors (node index and deadline) and an 8 B reference in the item array:
 * 32 B, about 40 B with growth slack — 1M pending timers take about 40 MB (`setTimeout`: ~150–210 B
 * each). Storage grows by half when full, up to `maxPending`, and is kept for reuse. The
 * {@link Timeout} handles `schedule()` returns are extra (~80 B each) while you keep them; the lean
 * API ({@link TimingWheel.add} / {@link TimingWheel.remove}) allocates nothing per timer.
 *
 * **Complexity.** `schedule`, `add`, `cancel`, `remove`: O(1) (placing walks at most seven levels).
 * `advance`: O(due + moved + visited × 7), where *moved* counts timers cascading one level down (at
 * most once per level each; delays up to 65 s cascade once) and *visited* the non-empty slots reached
 * — never the empty ticks skipped, so catching up after a long stall costs only the timers involved.
 * A lowest-level slot not already in deadline order (each slot knows) is sorted, O(k log k).
 * `nextDeadline`: O(1) when cached, else one scan of the first non-empty slot.
 *
 * **Misuse.** A stale handle or id (fired or cancelled) is harmless: `cancel()` returns `false`. The
 * wheel does not run callbacks; it returns items, so cancelling an item that `advance()` already
 * returned does nothing and returns `false`. Scheduling while you process returned items is fine;
 * a timer due at once is returned by the next `advance`. An id becomes ambiguous only after its node
 * was reused 2^29 times.
 *
 * **References.** G. Varghese and T. Lauck, *Hashed and Hierarchical Timing Wheels* (SOSP 1987),
 * scheme 7; tokio's timer (levels of 64 slots, occupancy bitmaps); Kafka's hierarchical
 * `TimingWheel`; Linux's 2016 timer-wheel rework; Netty's `HashedWheelTimer`. See
 * `docs/design/timing-wheel.md`.
 *
 * @typeParam T - the item type: anything; a message, a callback, an id
 *
 * @example
 * ```ts
 * import { TimingWheel } from '@flowing/timing-wheel'
 *
 * let time = 0
 * const wheel = new TimingWheel<string>({ now: () => time })
 * const reminder = wheel.schedule(30_000, 'remind')
 * wheel.schedule(5_000, 'close order')
 * reminder.cancel() // true: it was pending
 * time = 60_000
 * console.log(wheel.advance()) // ['close order']
 * ```
 *
 * @group Timing wheel
 */
export class TimingWheel<T> implements TimerOwner {
  // The clock, read by schedule() and by advance() without argument.
  readonly #now: () => number
  readonly #tickMs: number
  readonly #maxPending: number
  // Levels, slots and nodes; this class checks arguments and bounds, the core trusts them.
  readonly #core: WheelCore<T>

  /**
   * @param options - see {@link TimingWheelOptions}
   * @throws {@link WheelArgumentError} for a bad option, an unknown option name, or a clock that
   * does not return a finite number ≥ 0
   */
  constructor(options: TimingWheelOptions = {}) {
    checkOptions('options', options)
    checkKnownKeys('options', options, OPTION_KEYS)
    this.#now = options.now === undefined ? systemNow : checkFunction('options.now', options.now)
    const tickMs = options.tickMs ?? 1
    if (typeof tickMs !== 'number' || !(tickMs >= MIN_TICK_MS && tickMs <= MAX_TICK_MS)) {
      throw new WheelArgumentError('options.tickMs', `a number from ${MIN_TICK_MS} to ${MAX_TICK_MS}`, tickMs)
    }
    this.#tickMs = tickMs
    this.#maxPending = checkCount('options.maxPending', options.maxPending ?? 1_000_000, MAX_PENDING_LIMIT)
    this.#core = new WheelCore<T>(tickMs, this.#maxPending, checkTime('now()', this.#now()))
  }

  /** Timers pending now. */
  get size(): number {
    return this.#core.size
  }

  /** The bound on pending timers. */
  get maxPending(): number {
    return this.#maxPending
  }

  /** Width of a lowest-level slot, in ms. */
  get tickMs(): number {
    return this.#tickMs
  }

  /** Reads the wheel's clock. */
  now(): number {
    return this.#now()
  }

  /**
   * Schedules `item` at `now() + delayMs`.
   *
   * @param delayMs - from 0 to `Number.MAX_SAFE_INTEGER`; fractions allowed
   * @throws {@link WheelArgumentError} for NaN, a negative, infinite or non-number delay
   * @throws {@link WheelFullError} when `maxPending` timers are pending
   */
  schedule(delayMs: number, item: T): Timeout<T> {
    if (!isDelay(delayMs)) throw new WheelArgumentError('delayMs', DELAY_RULE, delayMs)
    const now = this.#now()
    if (!isTime(now)) throw new WheelArgumentError('now()', TIME_RULE, now)
    const deadline = now + delayMs
    return new Timeout(this, this.#insert(deadline, item), deadline, item)
  }

  /**
   * Schedules `item` at the absolute time `at` (the wheel's clock). A time in the past is allowed:
   * the item is due at the next advance.
   *
   * @throws {@link WheelArgumentError} unless `at` is a finite number ≥ 0
   * @throws {@link WheelFullError} when `maxPending` timers are pending
   */
  scheduleAt(at: number, item: T): Timeout<T> {
    checkTime('at', at)
    return new Timeout(this, this.#insert(at, item), at, item)
  }

  /**
   * Lean API for hot paths: schedules `item` at the absolute time `deadline` and returns a numeric
   * timer id (index and generation) instead of a handle, allocating nothing.
   *
   * @throws {@link WheelArgumentError} unless `deadline` is a finite number ≥ 0
   * @throws {@link WheelFullError} when `maxPending` timers are pending
   */
  add(deadline: number, item: T): number {
    if (!isTime(deadline)) throw new WheelArgumentError('deadline', TIME_RULE, deadline)
    return this.#insert(deadline, item)
  }

  /**
   * Cancels timer `id` (from {@link TimingWheel.add} or {@link Timeout.id}).
   *
   * @returns `true` if it was pending; `false` for a fired, cancelled or unknown id (nothing happens)
   */
  remove(id: number): boolean {
    return this.#core.remove(id)
  }

  /** `true` while timer `id` is pending. */
  has(id: number): boolean {
    return this.#core.has(id)
  }

  /**
   * Removes and returns the items due at `now` — every pending item whose deadline is ≤ `now` — in
   * deadline order, ties in schedule order.
   *
   * @param now - the current time; defaults to the wheel's clock. An earlier time than a previous
   * call's is allowed and returns only what is due at it.
   * @param limit - return at most this many (the earliest); the rest stay pending and cancellable,
   * and the next call resumes with them. A positive integer or `Infinity` (the default).
   * @throws {@link WheelArgumentError} for a bad `now` or `limit`; nothing is removed
   */
  advance(now: number = this.#now(), limit: number = Number.POSITIVE_INFINITY): T[] {
    checkTime('now', now)
    if (limit !== Number.POSITIVE_INFINITY) checkLimit('limit', limit)
    return this.#core.advance(now, limit)
  }

  /** The earliest pending deadline (exact), or `undefined` when nothing is pending. */
  nextDeadline(): number | undefined {
    return this.#core.nextDeadline()
  }

  /**
   * Cancels every pending timer and returns their items in deadline order (ties in schedule order):
   * what a shutdown snapshot needs. Handles and ids issued so far go stale.
   */
  clear(): T[] {
    return this.#core.clear()
  }

  /** Running totals; see {@link TimingWheelStats}. */
  stats(): TimingWheelStats {
    const { counters, pool, size } = this.#core
    return { pending: size, ...counters, capacity: pool.capacity }
  }

  #insert(deadline: number, item: T): number {
    const core = this.#core
    if (core.size >= this.#maxPending) throw new WheelFullError(core.size, this.#maxPending)
    return core.insert(deadline, item)
  }
}
