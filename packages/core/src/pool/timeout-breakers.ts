/**
 * The per-type escalation of the watchdog: a type whose handlers time out `threshold` times in a row
 * opens its breaker — new posts of that type are refused with `TimeoutBreakerOpenError` for `cooldownMs` —
 * then one post goes through as a probe: any settle that is not a timeout (a success or an ordinary
 * failure: the handler is not hanging) closes the breaker, another timeout reopens it.
 * (Retry-aware, message-holding breakers per route belong to the retry layer; this one only stops
 * feeding a type that keeps hanging.)
 *
 * ```text
 *  closed ──threshold timeouts in a row──▶ open ──cooldownMs──▶ half-open (admits one post: the probe)
 *    ▲                                      ▲                        │
 *    │                                      └───── a timeout ────────┤
 *    └──────── a settle of the type that is not a timeout ───────────┘
 * ```
 *
 * **One probe.** Half-open admits exactly one post; until an outcome of the type is recorded the
 * others are refused as when open. The breaker counts outcomes per type, not per message: the first
 * settle (closes) or timeout (reopens) of the type decides, be it the probe's or that of a message
 * admitted before the breaker opened. A probe that never reports — refused further down the
 * admission, dropped or cancelled — cannot close the type for good: after `cooldownMs` more without
 * an outcome, the next post is the probe.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { BreakerChange } from '../contracts/pool.js'

interface TypeState {
  timeouts: number
  openedAt: number
  state: 'closed' | 'open' | 'half-open'
  // Half-open: when the probe was admitted (one probe until an outcome; another after cooldownMs).
  probeAt: number
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
   * breaker past its cooldown turns half-open and admits this post as the probe; while the probe is
   * out, every other post is refused (for at most `cooldownMs`: a probe that never reports is
   * presumed lost, and the next post probes instead).
   */
  refuses(type: string): number | undefined {
    if (this.#types.size === 0) return undefined // the common case: nothing timing out
    const s = this.#types.get(type)
    if (s === undefined || s.state === 'closed') return undefined
    const now = this.#clock.now()
    const left = (s.state === 'open' ? s.openedAt : s.probeAt) + this.#cooldownMs - now
    if (left > 0) return left
    s.probeAt = now // first: a `breaker` listener that posts the type is refused, this post is the probe
    if (s.state === 'open') this.#set(type, s, 'half-open')
    return undefined
  }

  /**
   * Records how an attempt of `type` ended: timed out, or settled otherwise (a success or an ordinary
   * failure resets the count and closes a half-open breaker).
   */
  record(type: string, timedOut: boolean): void {
    if (!timedOut && this.#types.size === 0) return // the common case: nothing ever timed out
    let s = this.#types.get(type)
    if (!timedOut) {
      if (s === undefined) return
      s.timeouts = 0
      if (s.state !== 'closed') this.#set(type, s, 'closed')
      this.#types.delete(type)
      return
    }
    if (s === undefined) {
      s = { timeouts: 0, openedAt: 0, state: 'closed', probeAt: 0 }
      this.#types.set(type, s)
    }
    s.timeouts++
    if (s.state === 'half-open' || (s.state === 'closed' && s.timeouts >= this.#threshold)) {
      s.openedAt = this.#clock.now()
      this.#set(type, s, 'open')
    }
  }

  #set(type: string, s: TypeState, state: TypeState['state']): void {
    s.state = state
    this.#onChange({ type, state, timeouts: s.timeouts })
  }
}
