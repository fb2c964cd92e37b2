/**
 * The common case off the wheel: attempts guarded with the same `timeoutMs` and no heartbeat have
 * non-decreasing deadlines in guard order, so they wait in a FIFO per timeout value and only its head
 * holds a scheduler entry. Guard is a push, settling marks the attempt ended and leaves it where it
 * is; ended entries are dropped at the head or compacted away, so the queue holds at most
 * `1.5 × live + 32` entries.
 *
 * Generic over the attempt type (always `Attempt`), so this module needs nothing from `attempt.ts`.
 */
import type { DeadlineScheduler } from '../deadline-scheduler.js'

/** What the queue needs from an attempt. */
export interface Queued {
  /** The hard deadline (`startedAt + timeoutMs`). */
  readonly deadline: number
  /** `true` while running: still waiting in the queue. */
  readonly isCurrent: boolean
  /** Times the attempt out if its deadline has passed at `now` (the queue's entry fired). */
  _expire(now: number): void
}

// Ended entries tolerated beyond half the live ones before a compaction.
const MARGIN = 32

export class DeadlineQueue<A extends Queued> {
  // A ring: entries[head … head + size) in guard order, capacity a power of two.
  #entries: (A | undefined)[] = new Array(16)
  #mask = 15
  #head = 0
  #size = 0
  /** Entries still running. */
  live = 0
  // The deadline of the last entry pushed: a push must not go before it.
  #tail = Number.NEGATIVE_INFINITY
  // The scheduler entry for (at or before) the first live entry's deadline, or -1.
  #timerId = -1

  constructor(
    readonly timeoutMs: number,
    readonly scheduler: DeadlineScheduler<A>,
    readonly now: () => number,
    // `true`: disarm when the last live entry ends (a standalone watchdog: no timer keeps the process
    // alive). `false` (a shared scheduler with `has`): the entry stays, and is checked when reused.
    readonly disarmWhenIdle: boolean,
  ) {}

  /** Entries held, running or ended (for tests: bounded by `1.5 × live + 32`). */
  get held(): number {
    return this.#size
  }

  /** `true` when an attempt with this `deadline` may join: not before the last one. */
  fits(deadline: number): boolean {
    return deadline >= this.#tail
  }

  /** Appends an attempt (`fits` said yes); arms first, so a full scheduler throws before anything changes. */
  push(attempt: A, deadline: number): void {
    if (this.live === 0) this.#revive(deadline)
    if (this.#size > this.#mask) this.#grow()
    this.#entries[(this.#head + this.#size) & this.#mask] = attempt
    this.#size++
    this.live++
    this.#tail = deadline
  }

  /** An entry ended (settled, timed out or cancelled): drop ended heads, compact when too many are held. */
  leave(): void {
    if (--this.live === 0) {
      this.#reset()
      if (this.disarmWhenIdle && this.#timerId >= 0) {
        this.scheduler.remove(this.#timerId)
        this.#timerId = -1
      }
      return
    }
    this.#dropEnded()
    if (this.#size - this.live > (this.live >> 1) + MARGIN) this.#compact()
  }

  /** The scheduler entry fired: time out the first live entry if overdue, then arm for the next one. */
  _fire(): void {
    this.#timerId = -1
    try {
      this.#dropEnded()
      const first = this.#size > 0 ? this.#entries[this.#head] : undefined
      if (first !== undefined) first._expire(this.now())
    } finally {
      this.#arm()
    }
  }

  /** The first push after idle: keep a pending entry if it still is (and early enough), else arm anew. */
  #revive(deadline: number): void {
    const id = this.#timerId
    if (id >= 0) {
      const has = (this.scheduler as { has?: (id: number) => boolean }).has
      if (has?.call(this.scheduler, id) === true) return // armed at or before `deadline` (≥ #tail)
      this.#timerId = -1 // the owner cleared its scheduler: the entry is gone
    }
    this.#timerId = this.scheduler.add(deadline, this as unknown as A)
  }

  /** Arms for the first live entry unless an entry is pending (one pushed by `onTimeout`, say). */
  #arm(): void {
    if (this.#timerId >= 0) return
    this.#dropEnded()
    const first = this.#size > 0 ? this.#entries[this.#head] : undefined
    if (first !== undefined) this.#timerId = this.scheduler.add(first.deadline, this as unknown as A)
  }

  #dropEnded(): void {
    const entries = this.#entries
    while (this.#size > 0) {
      const first = entries[this.#head] as A
      if (first.isCurrent) return
      entries[this.#head] = undefined
      this.#head = (this.#head + 1) & this.#mask
      this.#size--
    }
  }

  /** Keeps the live entries, in order; O(held), at least a third of them ended. */
  #compact(): void {
    const entries = this.#entries
    const mask = this.#mask
    let kept = 0
    for (let i = 0; i < this.#size; i++) {
      const index = (this.#head + i) & mask
      const entry = entries[index] as A
      entries[index] = undefined
      if (entry.isCurrent) entries[(this.#head + kept++) & mask] = entry
    }
    this.#size = kept
  }

  #grow(): void {
    const old = this.#entries
    const entries: (A | undefined)[] = new Array(old.length * 2)
    for (let i = 0; i < this.#size; i++) entries[i] = old[(this.#head + i) & this.#mask]
    this.#entries = entries
    this.#mask = entries.length - 1
    this.#head = 0
  }

  #reset(): void {
    const entries = this.#entries
    for (let i = 0; i < this.#size; i++) entries[(this.#head + i) & this.#mask] = undefined
    this.#head = 0
    this.#size = 0
  }
}
