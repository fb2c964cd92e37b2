/**
 * What is asked before every start, whatever the message: the resource gate (`gate` option) and the
 * loop-wide rate limits. While either says no, nothing starts — posts are still admitted — and the
 * pool pumps again when it may say yes: the gate's poll, the budget's wake-up on the timing wheel.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { GateChange, ResourceGate } from '../contracts/flow.js'
import type { RateLimits } from './rate-limits.js'

/** The loop-wide budgets the gate asks: whether there are any, and whether they have room now. */
export type LoopBudgets = Pick<RateLimits, 'gated' | 'open'>
/** What the gate asks of the loop. */
export interface GateHost {
  /** The gate changed (the `gate` event). */
  changed(change: GateChange): void
  /** Dispatch may go on: pump. */
  pump(): void
  /** Work waits (a closed gate keeps polling only while it does). */
  waiting(): boolean
}

/** The resource gate and the loop-wide budgets. */
export class DispatchGate {
  readonly #limits: LoopBudgets
  readonly #gate: ResourceGate | false
  readonly #pollMs: number
  readonly #clock: Clock
  readonly #host: GateHost
  // When the gate closed (NaN: open), and the poll armed while it is closed and work waits.
  #closedAt = Number.NaN
  #poll: TimerHandle | undefined = undefined
  readonly #onPoll = (): void => {
    this.#poll = undefined
    if (this.#host.waiting()) this.#host.pump() // the pump asks the gate again
  }

  constructor(limits: LoopBudgets, gate: ResourceGate | false, clock: Clock, host: GateHost) {
    this.#limits = limits
    this.#gate = gate
    this.#pollMs = gate === false ? 100 : (gate.pollMs ?? 100)
    this.#clock = clock
    this.#host = host
  }

  /** Whether the resource gate holds dispatch now. */
  get closed(): boolean {
    return !Number.isNaN(this.#closedAt)
  }

  /** Whether dispatch is held on purpose now (the gate is closed, or a loop-wide budget is full). */
  holds(): boolean {
    return this.closed || (this.#limits.gated && !this.#limits.open(this.#clock.now()))
  }

  /** A handler may start now. */
  allows(): boolean {
    if (this.#gate !== false && !this.#resourceOpen()) return false
    return !this.#limits.gated || this.#limits.open(this.#clock.now())
  }

  /** Stops polling (the loop stopped). */
  stop(): void {
    if (this.#poll !== undefined) this.#clock.clearTimeout(this.#poll)
    this.#poll = undefined
  }

  #resourceOpen(): boolean {
    if (this.#poll !== undefined) return false // closed: asked again when the poll fires
    let open: boolean
    let error: unknown
    try {
      open = (this.#gate as ResourceGate).open() === true
    } catch (e) {
      open = false
      error = e
    }
    const now = this.#clock.now()
    if (open) {
      if (this.closed) {
        const closedMs = now - this.#closedAt
        this.#closedAt = Number.NaN
        this.#host.changed({ state: 'open', at: now, closedMs })
      }
      return true
    }
    if (!this.closed) {
      this.#closedAt = now
      this.#host.changed(
        error === undefined
          ? { state: 'closed', at: now, closedMs: 0 }
          : { state: 'closed', at: now, closedMs: 0, error },
      )
    }
    this.#poll = this.#clock.setTimeout(this.#onPoll, this.#pollMs)
    return false
  }
}
