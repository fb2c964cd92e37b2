/**
 * The per-type escalation of the watchdog: a type whose handlers time out `threshold` times in a row
 * opens its breaker — new posts of that type are refused with `CircuitOpenError` for `cooldownMs` —
 * then one post goes through as a probe: success closes the breaker, another timeout reopens it.
 * (Retry-aware, message-holding breakers per route belong to the retry layer; this one only stops
 * feeding a type that keeps hanging.)
 *
 * @module
 */
import type { Clock } from '../clock.js'

/** A breaker's state change, as the `breaker` event reports it. */
export interface BreakerChange {
  /** The message type. */
  readonly type: string
  /** The new state. */
  readonly state: 'open' | 'half-open' | 'closed'
  /** Consecutive timeouts of the type when it changed. */
  readonly timeouts: number
}

interface TypeState {
  timeouts: number
  openedAt: number
  state: 'closed' | 'open' | 'half-open'
}

/** Consecutive-timeout breakers, one per message type (created on first timeout). */
export class TimeoutBreakers {
  readonly #threshold: number
  readonly #cooldownMs: number
  readonly #clock: Clock
  readonly #onChange: (change: BreakerChange) => void
  readonly #types = new Map<string, TypeState>()

  /**
   * @param threshold - consecutive timeouts that open a type's breaker
   * @param cooldownMs - how long it stays open before a probe
   * @param clock - the loop's clock
   * @param onChange - called on every state change
   */
  constructor(threshold: number, cooldownMs: number, clock: Clock, onChange: (change: BreakerChange) => void) {
    this.#threshold = threshold
    this.#cooldownMs = cooldownMs
    this.#clock = clock
    this.#onChange = onChange
  }

  /**
   * Whether a post of `type` may go in; when refused, the ms left before a probe is allowed. An open
   * breaker past its cooldown turns half-open and admits this post as the probe.
   */
  refuses(type: string): number | undefined {
    const s = this.#types.get(type)
    if (s === undefined || s.state !== 'open') return undefined
    const left = s.openedAt + this.#cooldownMs - this.#clock.now()
    if (left > 0) return left
    this.#set(type, s, 'half-open')
    return undefined
  }

  /**
   * Records how an attempt of `type` ended: timed out, or completed (success resets the count).
   * @returns true when a state change was reported (listeners ran)
   */
  record(type: string, timedOut: boolean): boolean {
    if (!timedOut && this.#types.size === 0) return false // the common case: nothing ever timed out
    let s = this.#types.get(type)
    if (!timedOut) {
      if (s === undefined) return false
      s.timeouts = 0
      const changed = s.state !== 'closed'
      if (changed) this.#set(type, s, 'closed')
      this.#types.delete(type)
      return changed
    }
    if (s === undefined) {
      s = { timeouts: 0, openedAt: 0, state: 'closed' }
      this.#types.set(type, s)
    }
    s.timeouts++
    if (s.state === 'half-open' || (s.state === 'closed' && s.timeouts >= this.#threshold)) {
      s.openedAt = this.#clock.now()
      this.#set(type, s, 'open')
      return true
    }
    return false
  }

  #set(type: string, s: TypeState, state: TypeState['state']): void {
    s.state = state
    this.#onChange({ type, state, timeouts: s.timeouts })
  }
}
