/**
 * The circuit breakers' contract types: their options and policy, their states, and the `circuit`
 * event's payload. A leaf module.
 *
 * @module
 */

/**
 * A breaker state.
 *
 * @group Failure handling
 * @category Circuit breakers
 */
export type CircuitState = 'closed' | 'open' | 'half-open'

/**
 * A breaker's state change, as the `circuit` event reports it.
 *
 * @group Failure handling
 * @category Circuit breakers
 */
export interface CircuitChange {
  /** The breaker: the type, or `type/routeKey` with `per: 'route'`. */
  readonly route: string
  /** The message type. */
  readonly type: string
  /** The new state. */
  readonly state: CircuitState
  /** The previous state. */
  readonly previous: CircuitState
  /** Why it changed: its own counts, or `forced` by `loop.controls` (an operator, another process). */
  readonly reason: 'consecutive-failures' | 'failure-rate' | 'cooldown' | 'probe-failed' | 'probes-succeeded' | 'forced'
  /** For a change to `open`: how long until it half-opens and lets a probe through (ms). */
  readonly cooldownMs?: number
  /** Consecutive failures when it changed. */
  readonly consecutiveFailures: number
  /** Failure rate in the window when it changed (0–1). */
  readonly failureRate: number
  /** Messages it holds now. */
  readonly held: number
}

/**
 * Options of a circuit breaker (the `breaker` loop option, or per type at registration).
 *
 * @group Failure handling
 * @category Circuit breakers
 */
export interface CircuitBreakerOptions {
  /**
   * One breaker per message `type`, or per `route` (type + route key of the type's router).
   * @defaultValue 'type'
   */
  readonly per?: 'type' | 'route'
  /**
   * Consecutive failed attempts that open the breaker.
   * @defaultValue 5
   */
  readonly consecutiveFailures?: number
  /**
   * Failure rate in the window, in (0, 1], that opens the breaker (once `minVolume` attempts ended in it).
   * @defaultValue 0.5
   */
  readonly failureRate?: number
  /**
   * The failure-rate window (ms).
   * @defaultValue 10_000
   */
  readonly windowMs?: number
  /**
   * Attempts in the window before the rate may open the breaker.
   * @defaultValue 20
   */
  readonly minVolume?: number
  /**
   * How long the breaker stays open before probes (ms).
   * @defaultValue 30_000
   */
  readonly cooldownMs?: number
  /**
   * Held messages let through as probes when half-open; all must succeed to close it.
   * @defaultValue 1
   */
  readonly probes?: number
  /**
   * Deadline of a probe (ms), whatever the handler's own timeout (a probe must never hang the breaker).
   * @defaultValue 10_000
   */
  readonly probeTimeoutMs?: number
}

/**
 * A breaker's options with defaults applied.
 *
 * @group Failure handling
 * @category Circuit breakers
 */
export type CircuitPolicy = Required<CircuitBreakerOptions>
