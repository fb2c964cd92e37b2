import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { Envelope } from '../internal/envelope.js'

/** What the pool needs of an attempt: when it started, on the pool's clock. */
export interface PoolAttempt {
  /** When the attempt started, on the pool's clock (ms). */
  readonly startedAt: number
}

/** What the pool asks of the loop. */
export interface PoolHost<A> {
  /** True while the loop may start handlers (running or draining). */
  canDispatch(): boolean
  /** The next runnable message (its key now marked busy), or undefined. */
  take(): Envelope | undefined
  /** Creates the attempt for `m` (its `ctx`). */
  begin(m: Envelope): A
  /** The attempt of `m` is registered: listeners may learn of it (and may stop the loop). */
  started(m: Envelope): void
  /** Runs the handler chain; a thenable result means "settles later". */
  invoke(m: Envelope, attempt: A): unknown
  /** Records the outcome and frees the key. */
  end(m: Envelope, attempt: A, ok: boolean, value: unknown): void
  /** A pump stretch ended: user code may run next. */
  pumped(): void
  /** A detached (timed-out) attempt's handler settled at last: count it, change nothing else. */
  late(m: Envelope, attempt: A, ok: boolean, value: unknown): void
  /**
   * More timed-out handlers still run than `maxZombies` (called once per crossing, before the slot
   * the excess frees is given to new work): real concurrency may exceed `size` from now on.
   */
  zombiesOver(count: number, zombies: A[]): void
  /** Work waits for a worker (queued or parked). */
  waiting(): boolean
  /**
   * Every worker has run the same attempt for `sinceMs` ≥ the stall threshold while work waits:
   * once per episode (it ends when a worker starts something new). `attempts` hold the workers.
   */
  saturated(attempts: A[], sinceMs: number, thresholdMs: number): void
}

/**
 * A worker slot. Its two settle callbacks are created once per slot, never per message: an async
 * handler costs the loop one `.then()` and nothing else.
 */
class Slot<A extends PoolAttempt> {
  message: Envelope | undefined = undefined
  attempt: A | undefined = undefined
  // Timed out (or handed back): the outcome is recorded; the handler's late settle must not record it again.
  detached = false
  // Detached by a timeout with the handler still running: the slot stays out of use (a zombie reservation).
  held = false
  readonly onFulfilled: (value: unknown) => void
  readonly onRejected: (error: unknown) => void

  constructor(pool: WorkerPool<A>) {
    this.onFulfilled = (value) => pool.settle(this, true, value)
    this.onRejected = (error) => pool.settle(this, false, error)
  }
}

// The `then` every native promise inherits: a result that still has it settles once, asynchronously.
const promiseThen = Promise.prototype.then

/**
 * `size` logical workers. Which message a free worker runs is the run queue's business (per-key
 * serialization lives there, not in worker identity), so any worker takes any runnable message: the
 * pool is work-conserving, and `resize()` cannot break per-key order.
 *
 * Fairness to the process: at most `budget` handlers start per event-loop turn, and no more once
 * `budgetMs` have passed in the turn (checked every 16 starts). A turn boundary is
 * detected with one `setImmediate` armed at the first start of a turn; when the budget runs out first,
 * dispatch pauses until that immediate fires, so timers and I/O get their turn even while a million
 * synchronous handlers drain.
 *
 * Honest concurrency: a timed-out handler still runs, so its slot stays out of use — from the
 * timeout, whatever `graceMs` says — until it settles. At most `maxZombies` slots are held that way;
 * one timed-out handler more, and {@link PoolHost.zombiesOver} is told (once per crossing) before the
 * excess slot goes to new work. So the handlers executing never exceed `size` + (timed-out ones over
 * `maxZombies`), and never exceed `size` without that announcement.
 *
 * Saturation: when every slot has been busy with one attempt for `stallMs` while work waits — handlers
 * that never settle, or zombies holding every worker — nothing moves and, without deadlines, nothing
 * else would say so: {@link PoolHost.saturated} is told once per episode. Its one timer is armed only
 * while every slot is busy and work waits, and not again once the episode is reported (until a pump
 * fills every slot again), so an idle or merely busy pool pays nothing and a stuck one holds no timer.
 */
export class WorkerPool<A extends PoolAttempt> {
  readonly #host: PoolHost<A>
  readonly #clock: Clock
  readonly #budget: number
  readonly #budgetMs: number
  #size: number
  readonly #maxZombies: number
  // Timed-out handlers still running, and the slots they hold: min(zombies, maxZombies).
  #zombies = 0
  #held = 0
  // Zombies are above maxZombies: announced once per crossing.
  #over = false
  #running = 0
  // Slots not running anything; reused so steady state allocates none.
  readonly #idle: Slot<A>[] = []
  // Every slot ever made (≤ peak concurrency), to list running attempts without per-message cost.
  readonly #slots: Slot<A>[] = []
  // Starts since the last turn boundary, and when the first of them happened.
  #startsThisTurn = 0
  #turnStartedAt = 0
  // A turn-boundary immediate is pending.
  #turnArmed = false
  // Budget exhausted: dispatch waits for the turn-boundary immediate.
  #yielding = false
  // Re-entrancy guard: settle() inside a pump() must not start a nested pump.
  #pumping = false
  // Saturation: the threshold, the check armed while every slot is busy and work waits, and the
  // episode reported last, named by its youngest attempt's start (a worker that starts anything
  // begins a new episode; -Infinity: none reported).
  readonly #stallMs: number
  #stallCheck: TimerHandle | undefined = undefined
  #stallReported = Number.NEGATIVE_INFINITY
  readonly #onStallCheck = (): void => {
    this.#stallCheck = undefined
    this.#checkSaturation()
  }
  readonly #onTurn = (): void => {
    this.#turnArmed = false
    this.#startsThisTurn = 0
    if (this.#yielding) {
      this.#yielding = false
      this.pump()
    }
  }

  constructor(
    host: PoolHost<A>,
    clock: Clock,
    size: number,
    budget: number,
    budgetMs: number,
    maxZombies: number,
    stallMs: number,
  ) {
    this.#host = host
    this.#clock = clock
    this.#size = size
    this.#maxZombies = maxZombies
    this.#stallMs = stallMs
    this.#budget = budget
    this.#budgetMs = budgetMs
  }

  /** Configured worker count. */
  get size(): number {
    return this.#size
  }

  /** Handlers running now. */
  get running(): number {
    return this.#running
  }

  /** Timed-out handlers still running (each holds its slot, up to `maxZombies`). */
  get zombies(): number {
    return this.#zombies
  }

  /** Changes the worker count; extra running handlers finish, none is interrupted. */
  resize(size: number): void {
    this.#size = size
    this.pump()
  }

  /** Starts as many runnable messages as there are free workers and budget. */
  pump(): void {
    if (this.#pumping) return
    this.#pumping = true
    try {
      if (this.#yielding) return
      while (this.#running + this.#held < this.#size && this.#host.canDispatch()) {
        if (this.#startsThisTurn >= this.#budget || this.#overTime()) {
          this.#yielding = true
          break
        }
        const m = this.#host.take()
        if (m === undefined) break
        this.#start(m)
      }
      // Armed once per saturated stretch (the check re-arms itself while it lasts), disarmed when the
      // pool runs nothing at all — not each time a slot frees: a streamed load that fills and frees
      // slots per message would pay a timer per message. O(1) per pump, and no timer left behind.
      const busy = this.#running + this.#held
      if (busy >= this.#size) {
        if (this.#stallCheck === undefined) this.#armSaturation()
      } else if (busy === 0 && this.#stallCheck !== undefined) this.#disarmSaturation()
    } finally {
      this.#pumping = false
      this.#host.pumped()
    }
  }

  /** A slot's handler settled asynchronously. */
  settle(slot: Slot<A>, ok: boolean, value: unknown): void {
    try {
      if (slot.detached) this.#settleLate(slot, ok, value)
      else this.#finish(slot, ok, value)
    } finally {
      this.pump() // even if the host threw: the slot is free and waiting work must not stall
    }
  }

  /** The attempts running now (timed-out ones no longer count). */
  attempts(): A[] {
    const out: A[] = []
    for (const slot of this.#slots) if (slot.attempt !== undefined && !slot.detached) out.push(slot.attempt)
    return out
  }

  /**
   * Gives up on the running attempt that `matches`: the outcome is recorded now — once — with `error`;
   * whatever the handler does later only reaches `host.late`. With `hold` (a timeout: the handler
   * runs on) the slot stays held until the handler settles, up to `maxZombies` such slots; without
   * (handed back at a stop's deadline: nothing new starts any more) it is free at once.
   *
   * @returns false when no running attempt matches (it finished first: the race is lost, nothing changes)
   */
  detach(matches: (attempt: A) => boolean, error: unknown, hold: boolean): boolean {
    const slot = this.#slots.find((s) => !s.detached && s.attempt !== undefined && matches(s.attempt))
    if (slot === undefined) return false
    slot.detached = true
    this.#running--
    if (hold) {
      slot.held = true
      this.#zombiesChanged(1)
    }
    try {
      this.#host.end(slot.message as Envelope, slot.attempt as A, false, error)
    } finally {
      this.pump()
    }
    return true
  }

  #settleLate(slot: Slot<A>, ok: boolean, value: unknown): void {
    const m = slot.message as Envelope
    const attempt = slot.attempt as A
    slot.detached = false
    slot.message = undefined
    slot.attempt = undefined
    this.#slots.splice(this.#slots.indexOf(slot), 1) // a fresh slot replaced it long ago
    if (slot.held) {
      slot.held = false
      this.#zombiesChanged(-1) // the caller pumps: the held slot may take waiting work
    }
    this.#host.late(m, attempt, ok, value)
  }

  // The one writer of the zombie reservation: the slots held, and the crossing of maxZombies.
  #zombiesChanged(delta: number): void {
    const count = this.#zombies + delta
    this.#zombies = count
    this.#held = Math.min(count, this.#maxZombies)
    const over = count > this.#maxZombies
    if (over === this.#over) return
    this.#over = over
    if (over) this.#host.zombiesOver(count, this.#zombieAttempts())
  }

  #armSaturation(): void {
    if (this.#host.canDispatch() && this.#host.waiting()) {
      this.#stallCheck = this.#clock.setTimeout(this.#onStallCheck, this.#stallMs)
    }
  }

  #disarmSaturation(): void {
    this.#clock.clearTimeout(this.#stallCheck)
    this.#stallCheck = undefined
    this.#stallReported = Number.NEGATIVE_INFINITY
  }

  // Every slot busy with an attempt at least stallMs old, and work waiting: report the episode once.
  // Otherwise the episode is over; re-armed for when the youngest attempt reaches the threshold.
  #checkSaturation(): void {
    if (this.#running + this.#held < this.#size || !this.#host.canDispatch() || !this.#host.waiting()) {
      this.#stallReported = Number.NEGATIVE_INFINITY
      return // the next pump that fills every slot re-arms
    }
    const occupants: A[] = []
    let youngest = Number.NEGATIVE_INFINITY
    for (const slot of this.#slots) {
      if (slot.attempt === undefined || (slot.detached && !slot.held)) continue
      occupants.push(slot.attempt)
      youngest = Math.max(youngest, slot.attempt.startedAt)
    }
    const sinceMs = this.#clock.now() - youngest
    if (sinceMs < this.#stallMs) {
      this.#stallCheck = this.#clock.setTimeout(this.#onStallCheck, this.#stallMs - sinceMs)
      return
    }
    // Reported (now or before): nothing more to say until a worker moves, and that goes through a
    // pump, which re-arms. So a loop stuck for good holds no timer.
    if (youngest <= this.#stallReported) return
    this.#stallReported = youngest
    this.#host.saturated(occupants, sinceMs, this.#stallMs)
  }

  #zombieAttempts(): A[] {
    const out: A[] = []
    for (const slot of this.#slots) if (slot.held) out.push(slot.attempt as A)
    return out
  }

  #newSlot(): Slot<A> {
    const slot = new Slot<A>(this)
    this.#slots.push(slot)
    return slot
  }

  // Every 16th start of a turn, checks the time spent: a count alone would let 1024 CPU-heavy
  // handlers (200 µs each) hold the event loop for 200 ms.
  #overTime(): boolean {
    return (this.#startsThisTurn & 15) === 15 && this.#clock.now() - this.#turnStartedAt > this.#budgetMs
  }

  #start(m: Envelope): void {
    if (!this.#turnArmed) {
      this.#turnArmed = true
      this.#turnStartedAt = this.#clock.now()
      this.#clock.setImmediate(this.#onTurn)
    }
    this.#startsThisTurn++
    this.#running++
    const slot = this.#idle.pop() ?? this.#newSlot()
    slot.message = m
    const attempt = this.#host.begin(m)
    slot.attempt = attempt
    this.#host.started(m)
    if (slot.detached) {
      // A `started` listener stopped the loop with deadline 0: handed back before it ran.
      this.#settleLate(slot, false, undefined)
      return
    }
    let result: unknown
    try {
      result = this.#host.invoke(m, attempt)
      // The hot path: one `.then()` on a native promise. Reading `then` is inside the try: an own
      // getter on a promise may throw, and that fails the attempt like a throwing handler.
      if (result instanceof Promise && result.then === promiseThen) {
        result.then(slot.onFulfilled, slot.onRejected)
        return
      }
    } catch (error) {
      this.#settleNow(slot, false, error)
      return
    }
    if (result !== null && (typeof result === 'object' || typeof result === 'function')) this.#adopt(slot, result)
    else this.#settleNow(slot, true, result)
  }

  // Any other object may be a thenable that misbehaves: a `then` getter or a then() that throws, calls
  // back twice, calls both callbacks, or never calls back. `then` is read once (a getter may answer
  // differently each time); a native promise adopts it, so the slot settles exactly once, on a later
  // microtask (I6) — or never, like a promise that never settles, and then its deadline applies.
  #adopt(slot: Slot<A>, result: object): void {
    let then: unknown
    try {
      then = (result as { then?: unknown }).then
    } catch (error) {
      this.#settleNow(slot, false, error)
      return
    }
    if (typeof then !== 'function') {
      this.#settleNow(slot, true, result)
      return
    }
    // The executor's throw rejects unless a callback came first; later calls are ignored.
    new Promise<unknown>((resolve, reject) => then.call(result, resolve, reject)).then(
      slot.onFulfilled,
      slot.onRejected,
    )
  }

  // A synchronous handler returned or threw. If it stopped the loop with a deadline of 0 while it
  // ran, its slot was detached under it: the outcome is already recorded, this settle is a late one.
  #settleNow(slot: Slot<A>, ok: boolean, value: unknown): void {
    if (slot.detached) this.#settleLate(slot, ok, value)
    else this.#finish(slot, ok, value)
  }

  #finish(slot: Slot<A>, ok: boolean, value: unknown): void {
    const m = slot.message as Envelope
    const attempt = slot.attempt as A
    slot.message = undefined
    slot.attempt = undefined
    this.#running--
    this.#idle.push(slot)
    this.#host.end(m, attempt, ok, value)
  }
}
