/**
 * One guarded run of a handler: the token that races completion, failure, timeout and cancellation.
 *
 * @module
 */
import type { AbortSignalLike } from './abort-signal.js'
import type { AttemptLabel, AttemptSnapshot, AttemptState } from './contracts.js'
import { AttemptCancelledError, FencedError, HandlerTimeoutError, type TimeoutKind } from './errors.js'
import type { WatchdogCore } from './internal/core.js'
import type { DeadlineQueue } from './internal/deadline-queue.js'
import { renderLabel } from './internal/label.js'

/**
 * Called in the timeout step, after the attempt is marked `timed-out` and before its signal is
 * aborted: free the worker slot here. Should not throw; if it does, the signal is still aborted and
 * the grace timer armed, then the error propagates.
 *
 * @remarks Usually called from the wheel's timer; but when that timer runs late and the attempt is
 * touched first past its deadline — `done()`, `fail()`, `fence()`, `heartbeat()` — the timeout step
 * runs inside that call, before it returns.
 *
 * @group Attempts
 */
export type TimeoutHandler = (attempt: Attempt, error: HandlerTimeoutError) => void

/**
 * A timed-out attempt still unsettled `graceMs` after its timeout.
 *
 * @group Attempts
 */
export interface ZombieInfo {
  /** The attempt's epoch. */
  readonly epoch: number
  /** The rendered label. */
  readonly label: string
  /** Time since the attempt was guarded, in ms. */
  readonly ageMs: number
  /** The attempt itself. */
  readonly attempt: Attempt
}

/**
 * Called once when a timed-out attempt becomes a zombie.
 *
 * @group Attempts
 */
export type ZombieHandler = (zombie: ZombieInfo) => void

// States as small integers: a Smi field, no string compare on the hot path.
const RUNNING = 0
const COMPLETED = 1
const FAILED = 2
const TIMED_OUT = 3
const CANCELLED = 4
const STATES: readonly AttemptState[] = ['running', 'completed', 'failed', 'timed-out', 'cancelled']
// Flags of an attempt that lost the race: its handler settled late / it is a zombie now.
const LATE = 1
const ZOMBIE = 2

/**
 * The token of one guarded run, returned by {@link Watchdog.guard}.
 *
 * @remarks
 * **One outcome.** {@link Attempt.done}, {@link Attempt.fail}, {@link Attempt.cancel} and the
 * watchdog's timeout race; the first wins and fixes {@link Attempt.state}, the others return `false`.
 *
 * **Cheap.** Guarding is one wheel `add`, settling one wheel `remove` (queued: a FIFO push and an O(1)
 * mark, no wheel operation while its FIFO's head entry is armed); the `AbortController` is
 * created only if {@link Attempt.signal} is read; {@link Attempt.heartbeat} is a clock read and a
 * field write — the wheel notices it only when the armed deadline fires (lazy re-arm).
 *
 * **Late settlement.** Call `done()` / `fail()` when the handler settles, whatever happened: on an
 * attempt that lost to a timeout or a cancellation the first such call counts one
 * `lateCompletions`, ends its zombie status and returns `false` (swallow the result).
 *
 * **The clock decides, not the timer.** A deadline is a time on the watchdog's clock. On a busy event
 * loop the wheel's timer may fire well after it; whatever touches the attempt first past a deadline —
 * the timer, `done()`, `fail()`, `fence()` or `heartbeat()` — runs the timeout step, so a handler that
 * settles after its deadline has lost the race (`done()` returns `false`, a late completion), and an
 * effect it makes after its deadline is fenced, however late the timer is. Between the deadline and
 * that first touch, {@link Attempt.isCurrent} still reads `true`.
 *
 * @group Attempts
 */
export class Attempt {
  readonly #core: WatchdogCore<Attempt>
  readonly #epoch: number
  readonly #startedAt: number
  readonly #timeoutMs: number
  // 0: no heartbeat deadline.
  readonly #heartbeatMs: number
  readonly #label: AttemptLabel | string | undefined
  readonly #onTimeout: TimeoutHandler | undefined
  #state = RUNNING
  #flags = 0
  // Last heartbeat (starts at #startedAt); only read when the armed deadline fires.
  #lastBeat: number
  // The pending wheel entry (deadline while running, grace while timed-out), or -1.
  #timerId: number
  // The FIFO of its timeout value this attempt waits in while running (no wheel entry of its own), if any.
  #queue: DeadlineQueue<Attempt> | undefined
  // Lazy: most handlers never read the signal.
  #controller: AbortController | undefined = undefined
  // The abort reason once timed out or cancelled (undefined: the default cancel error, made lazily).
  #reason: unknown = undefined

  /** @internal Created by {@link Watchdog.guard} only. */
  constructor(
    core: WatchdogCore<Attempt>,
    timeoutMs: number,
    heartbeatMs: number,
    label: AttemptLabel | string | undefined,
    onTimeout: TimeoutHandler | undefined,
    now: number,
    queue: DeadlineQueue<Attempt> | undefined,
  ) {
    this.#core = core
    this.#timeoutMs = timeoutMs
    this.#heartbeatMs = heartbeatMs
    this.#label = label
    this.#onTimeout = onTimeout
    this.#startedAt = now
    this.#lastBeat = now
    const deadline = now + timeoutMs
    // Without a heartbeat, in deadline order: the FIFO of its timeout value (arming its head if it was
    // idle). Otherwise the first wake-up is the earlier deadline. Either throws (wheel full) before
    // anything is counted.
    if (queue !== undefined && heartbeatMs === 0 && queue.fits(deadline)) {
      queue.push(this, deadline)
      this.#queue = queue
      this.#timerId = -1
    } else {
      this.#queue = undefined
      this.#timerId = core.scheduler.add(
        heartbeatMs > 0 && heartbeatMs < timeoutMs ? now + heartbeatMs : deadline,
        this,
      )
    }
    this.#epoch = core.nextEpoch++
  }

  /** A number unique to this attempt (per watchdog), increasing in guard order. */
  get epoch(): number {
    return this.#epoch
  }

  /** Where the attempt stands; see {@link AttemptState}. */
  get state(): AttemptState {
    return STATES[this.#state] as AttemptState
  }

  /** `true` while running: effects made on behalf of this attempt may still be applied. */
  get isCurrent(): boolean {
    return this.#state === RUNNING
  }

  /** The label given at guard time, rendered (`order.paid (key "o-1")`, or `attempt #epoch`). */
  get label(): string {
    return renderLabel(this.#label, this.#epoch)
  }

  /** When it was guarded, on the watchdog's clock. */
  get startedAt(): number {
    return this.#startedAt
  }

  /** The hard deadline (`startedAt + timeoutMs`): never moves. */
  get deadline(): number {
    return this.#startedAt + this.#timeoutMs
  }

  /** The current heartbeat deadline (`last heartbeat + heartbeatMs`), or `undefined` without one. */
  get heartbeatDeadline(): number | undefined {
    return this.#heartbeatMs > 0 ? this.#lastBeat + this.#heartbeatMs : undefined
  }

  /** `true` once the handler of an attempt that lost the race has settled (`done()`/`fail()` after losing). */
  get settledLate(): boolean {
    return (this.#flags & LATE) !== 0
  }

  /** `true` while this attempt is a zombie: timed out, unsettled past the grace period. */
  get isZombie(): boolean {
    return (this.#flags & ZOMBIE) !== 0
  }

  /**
   * The attempt's `AbortSignal`, created on first read. Aborted when the attempt times out (reason:
   * a {@link HandlerTimeoutError}) or is cancelled (reason: the one given to `cancel`), and only then;
   * read after that, it is already aborted.
   */
  get signal(): AbortSignalLike {
    let controller = this.#controller
    if (controller === undefined) {
      controller = new AbortController()
      this.#controller = controller
      if (this.#state === TIMED_OUT || this.#state === CANCELLED) controller.abort(this.#abortReason())
    }
    return controller.signal
  }

  /**
   * Extends the heartbeat deadline to `now + heartbeatMs`; the hard deadline never moves. O(1): a
   * clock read and a field write, no timer touched.
   *
   * @returns `false` when the attempt is no longer running
   */
  heartbeat(): boolean {
    if (this.#state !== RUNNING) return false
    const now = this.#core.now()
    const overdue = this.#overdue(now)
    if (overdue !== undefined) {
      this.#timeout(now, overdue, false) // a beat after a deadline does not revive the attempt
      return false
    }
    this.#lastBeat = now
    return true
  }

  /**
   * The handler succeeded. Disarms the deadline.
   *
   * @returns `true` if completion won the race; `false` if the attempt had already ended, or a
   * deadline has passed on the clock (the timeout step runs now, this call is the late completion). On
   * a timed-out or cancelled attempt the first call counts a late completion and ends its zombie status
   * @param now - a reading of the watchdog's clock the caller took just now, if it has one (saves a
   *   read; not a finite number: ignored, the clock is read)
   */
  done(now?: number): boolean {
    return this.#finish(COMPLETED, now)
  }

  /**
   * The handler failed. Disarms the deadline.
   *
   * @param now - as for {@link Attempt.done}
   * @returns `true` if failure won the race; `false` otherwise, as for {@link Attempt.done}
   */
  fail(now?: number): boolean {
    return this.#finish(FAILED, now)
  }

  /**
   * Cancels the attempt (shutdown, the caller gave up): disarms and aborts the signal with `reason`
   * (default: an {@link AttemptCancelledError}). The handler may still be running: call `done()` /
   * `fail()` when it settles.
   *
   * @returns `true` if cancellation won the race
   */
  cancel(reason?: unknown): boolean {
    if (this.#state !== RUNNING) return false
    this.#state = CANCELLED
    this.#reason = reason
    const core = this.#core
    core.running--
    core.cancelled++
    this.#disarm()
    this.#controller?.abort(this.#abortReason())
    return true
  }

  /**
   * Aborts the attempt's signal without ending the attempt: it stays running under its deadlines, so a
   * handler asked to give up (a stop without drain) that ignores the signal still times out, and its
   * late effects are still fenced then. A later timeout leaves the signal as it is.
   *
   * @param reason - the signal's abort reason
   * @returns `false` when the attempt is no longer running
   */
  abort(reason: unknown): boolean {
    if (this.#state !== RUNNING) return false
    let controller = this.#controller
    if (controller === undefined) {
      controller = new AbortController()
      this.#controller = controller
    }
    if (!controller.signal.aborted) controller.abort(reason)
    return true
  }

  /**
   * Refuses an effect of an attempt that is no longer running: call it before every effect a handler
   * makes through its context (`post`, acks …). A running attempt past a deadline times out here.
   *
   * @param effect - names the effect in the error, e.g. `ctx.post`
   * @throws {@link FencedError} unless the attempt is running and within its deadlines (the refusal is counted)
   */
  fence(effect = 'an effect'): void {
    if (this.#state === RUNNING) {
      const now = this.#core.now()
      const overdue = this.#overdue(now)
      if (overdue === undefined) return
      this.#timeout(now, overdue, false) // past the deadline: the timer is late, the effect is not
    }
    this.#core.fencedEffects++
    throw new FencedError(this.label, this.#epoch, this.state, effect)
  }

  /** A snapshot for stall reports: epoch, label, state and age at the watchdog's `now()`. */
  describe(): AttemptSnapshot {
    const ageMs = this.#core.now() - this.#startedAt
    return { epoch: this.#epoch, label: this.label, state: this.state, ageMs }
  }

  /** @internal The wheel entry of this attempt is due: check the deadlines, or become a zombie. */
  _fire(): void {
    this.#timerId = -1
    const now = this.#core.now()
    if (this.#state === RUNNING) this.#check(now)
    else if (this.#state === TIMED_OUT && this.#flags === 0) this.#becomeZombie(now)
  }

  /** @internal The entry of this attempt's FIFO fired with it first: time out if its deadline has passed at `now`. */
  _expire(now: number): void {
    if (this.#state !== RUNNING) return
    const overdue = this.#overdue(now)
    if (overdue !== undefined) this.#timeout(now, overdue, false)
  }

  /** Times out if a deadline has passed; otherwise re-arms for the earlier one (a newer heartbeat). */
  #check(now: number): void {
    const overdue = this.#overdue(now)
    if (overdue !== undefined) this.#timeout(now, overdue, false)
    else {
      const beat = this.#heartbeatMs > 0 ? this.#lastBeat + this.#heartbeatMs : Number.POSITIVE_INFINITY
      this.#timerId = this.#core.scheduler.add(Math.min(this.#startedAt + this.#timeoutMs, beat), this)
    }
  }

  /** Which deadline has passed at `now`, if any: the hard one first. */
  #overdue(now: number): TimeoutKind | undefined {
    if (now >= this.#startedAt + this.#timeoutMs) return 'deadline'
    if (this.#heartbeatMs > 0 && now >= this.#lastBeat + this.#heartbeatMs) return 'heartbeat'
    return undefined
  }

  /**
   * The timeout step, synchronous: mark, let the owner free the slot, abort, arm the grace timer —
   * unless `settling` (a `done()`/`fail()` found the deadline passed: the handler settled already).
   */
  #timeout(now: number, kind: TimeoutKind, settling: boolean): void {
    const core = this.#core
    this.#state = TIMED_OUT
    this.#disarm() // the deadline entry is still pending when the timer is late
    core.running--
    core.timedOut++
    const error = new HandlerTimeoutError({
      label: this.label,
      epoch: this.#epoch,
      kind,
      timeoutMs: this.#timeoutMs,
      heartbeatMs: this.#heartbeatMs,
      elapsedMs: now - this.#startedAt,
      sinceHeartbeatMs: now - this.#lastBeat,
    })
    this.#reason = error
    try {
      ;(this.#onTimeout ?? core.onTimeout)?.(this, error)
    } finally {
      this.#controller?.abort(error)
      // onTimeout may have settled the handler already (done() after losing): no grace timer then.
      if (this.#flags === 0 && !settling) this.#armGrace(now)
    }
  }

  #armGrace(now: number): void {
    const grace = this.#core.graceMs
    if (grace === 0) this.#becomeZombie(now)
    else if (grace !== Number.POSITIVE_INFINITY) this.#timerId = this.#core.scheduler.add(now + grace, this)
  }

  #becomeZombie(now: number): void {
    const core = this.#core
    this.#flags |= ZOMBIE
    core.zombies.add(this)
    core.zombiesTotal++
    core.onZombie?.({ epoch: this.#epoch, label: this.label, ageMs: now - this.#startedAt, attempt: this })
  }

  /**
   * The first settlement wins if no deadline has passed on the clock; a later one (or one past a
   * deadline) on a lost attempt is a late completion, counted once.
   */
  #finish(state: number, reading: number | undefined): boolean {
    const core = this.#core
    if (this.#state === RUNNING) {
      const now = reading !== undefined && Number.isFinite(reading) ? reading : core.now() // a bad reading is ignored
      const overdue = this.#overdue(now)
      if (overdue === undefined) return this.#win(state)
      this.#timeout(now, overdue, true) // settled after its deadline, before the late timer: it lost
    }
    if ((this.#state === TIMED_OUT || this.#state === CANCELLED) && (this.#flags & LATE) === 0) {
      if ((this.#flags & ZOMBIE) !== 0) core.zombies.delete(this)
      this.#flags = LATE
      core.lateCompletions++
      this.#disarm()
    }
    return false
  }

  #win(state: number): true {
    const core = this.#core
    this.#state = state
    core.running--
    if (state === COMPLETED) core.completed++
    else core.failed++
    this.#disarm()
    return true
  }

  #disarm(): void {
    const queue = this.#queue
    if (queue !== undefined) {
      this.#queue = undefined
      queue.leave() // O(1) amortized: the entry stays in the FIFO, marked by this attempt's state
      return
    }
    if (this.#timerId < 0) return
    this.#core.scheduler.remove(this.#timerId)
    this.#timerId = -1
  }

  #abortReason(): unknown {
    if (this.#reason === undefined) this.#reason = new AttemptCancelledError(this.label, this.#epoch)
    return this.#reason
  }
}
