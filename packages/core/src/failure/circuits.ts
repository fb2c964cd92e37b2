/**
 * Per-route circuit breakers that *hold* messages: while a route's breaker is open its messages wait in
 * the queue — no attempt burnt, nothing dead-lettered — and every other route keeps flowing.
 *
 * ```
 *  CLOSED ──(N consecutive failures, or failure rate ≥ r over ≥ v attempts in the window)──▶ OPEN
 *    ▲                                                                                       │ cooldownMs
 *    └──(all `probes` succeed)── HALF_OPEN ◀──────────────────────────────────────────────────┘
 *                                   └──(a probe fails)──▶ OPEN (a new cooldown)
 * ```
 *
 * @module
 */
import { Heap } from 'heap-js'
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { CircuitChange, CircuitPolicy, CircuitState } from '../contracts/failures.js'
import type { Envelope } from '../internal/envelope.js'
import { SlidingWindow } from './sliding-window.js'

/** What the breakers ask of the loop. */
export interface CircuitHost {
  /** A held message may run again: put it back in the queue. */
  release(m: Envelope): void
  /** A message was held. */
  held(m: Envelope, route: string): void
  /** A breaker changed state. */
  changed(change: CircuitChange): void
}

/** One route's breaker. */
class Circuit {
  state: CircuitState = 'closed'
  consecutive = 0
  readonly window: SlidingWindow
  timer: TimerHandle | undefined
  // Held messages, most urgent first.
  readonly held: Heap<Envelope>
  // Probes let through and not yet finished; successes in this half-open period.
  readonly probes = new Set<Envelope>()
  successes = 0

  constructor(
    readonly route: string,
    readonly type: string,
    readonly policy: CircuitPolicy,
    compare: (a: Envelope, b: Envelope) => number,
  ) {
    this.window = new SlidingWindow(policy.windowMs)
    this.held = new Heap<Envelope>(compare)
  }
}

/** The loop's breakers, one per route, created on a route's first failure. */
export class Circuits {
  readonly #clock: Clock
  readonly #compare: (a: Envelope, b: Envelope) => number
  readonly #policyFor: (type: string) => CircuitPolicy | false
  readonly #host: CircuitHost
  readonly #circuits = new Map<string, Circuit>()
  #held = 0
  // Some type has a breaker: successes are counted too (for the failure rate).
  #enabled = false
  // Breakers not closed: while none is, nothing is held and `mustHold` is one comparison.
  #tripped = 0

  /**
   * @param clock - the loop's clock (cooldown timers)
   * @param compare - the queue's urgency order (held messages leave in it)
   * @param policyFor - a type's breaker policy, or false when it has none
   * @param host - the loop
   */
  constructor(
    clock: Clock,
    compare: (a: Envelope, b: Envelope) => number,
    policyFor: (type: string) => CircuitPolicy | false,
    host: CircuitHost,
  ) {
    this.#clock = clock
    this.#compare = compare
    this.#policyFor = policyFor
    this.#host = host
  }

  /** Starts counting outcomes: some type has a breaker (the loop's option, or one registration). */
  enable(): void {
    this.#enabled = true
  }

  /** Messages held by open breakers. */
  get held(): number {
    return this.#held
  }

  /**
   * Called when `m` would start: true (and `m` is now held) when its breaker is open, or half-open with
   * every probe slot taken. A half-open breaker lets `m` through as a probe when a slot is free.
   */
  mustHold(m: Envelope): boolean {
    if (this.#tripped === 0) return false // the common case: every breaker closed
    const c = this.#circuits.get(this.#routeOf(m))
    if (c === undefined || c.state === 'closed' || c.probes.has(m)) return false
    if (c.state === 'half-open' && c.probes.size + c.successes < c.policy.probes) {
      c.probes.add(m)
      return false
    }
    c.held.push(m)
    this.#held++
    this.#host.held(m, c.route)
    return true
  }

  /** The deadline of `m` if it runs as a probe (the probe bound), else undefined. */
  probeTimeout(m: Envelope): number | undefined {
    if (this.#tripped === 0) return undefined
    const c = this.#circuits.get(this.#routeOf(m))
    return c?.probes.has(m) === true ? c.policy.probeTimeoutMs : undefined
  }

  /**
   * Records how an attempt ended. `failed` is false for successes and for failures the breaker must
   * not count (non-retryable ones: the downstream answered).
   * @returns whether the breaker changed state (listeners ran)
   */
  record(m: Envelope, failed: boolean, now: number): boolean {
    if (!this.#enabled) return false // the common case: no breakers at all
    const policy = this.#policyFor(m.type)
    if (policy === false) return false
    const route = this.#routeOf(m)
    let c = this.#circuits.get(route)
    if (c === undefined) {
      c = new Circuit(route, m.type, policy, this.#compare)
      this.#circuits.set(route, c)
    }
    if (c.probes.delete(m)) {
      if (failed) this.#open(c, 'probe-failed')
      else if (++c.successes >= c.policy.probes) this.#close(c)
      return true
    }
    if (c.state !== 'closed') return false // attempts that started before it opened: no news
    c.window.record(now, failed)
    if (!failed) {
      c.consecutive = 0
      return false
    }
    c.consecutive++
    if (c.consecutive >= policy.consecutiveFailures) this.#open(c, 'consecutive-failures')
    else if (c.window.events(now) >= policy.minVolume && this.#rate(c, now) >= policy.failureRate) {
      this.#open(c, 'failure-rate')
    } else return false
    return true
  }

  /**
   * Opens the breaker of `type` (of its route `routeKey` with `per: 'route'`) for `cooldownMs` of the
   * policy's cooldown, or closes it (releasing what it holds), whatever its counts say: an operator's
   * hand, or another process's breaker on the same downstream. An open breaker stays as it is.
   * @returns false when `type` has no breaker
   */
  force(type: string, routeKey: string | undefined, open: boolean, cooldownMs?: number): boolean {
    const policy = this.#policyFor(type)
    if (policy === false) return false
    const route = policy.per === 'route' && routeKey !== undefined ? `${type}/${routeKey}` : type
    let c = this.#circuits.get(route)
    if (c === undefined) {
      c = new Circuit(route, type, policy, this.#compare)
      this.#circuits.set(route, c)
    }
    if (open && c.state !== 'open') this.#open(c, 'forced', cooldownMs ?? policy.cooldownMs)
    else if (!open && c.state !== 'closed') {
      if (c.timer !== undefined) this.#clock.clearTimeout(c.timer)
      c.timer = undefined
      this.#close(c, 'forced')
    }
    return true
  }

  /**
   * A probe that never ran (dropped as a duplicate): its probe slot goes to the next held message.
   */
  abandon(m: Envelope): void {
    if (this.#tripped === 0) return
    const c = this.#circuits.get(this.#routeOf(m))
    if (c === undefined || !c.probes.delete(m) || c.state !== 'half-open' || c.held.length === 0) return
    const next = this.#unhold(c)
    c.probes.add(next)
    this.#host.release(next)
  }

  /** Stops every cooldown timer (the loop stopped; held messages were handed back or cancelled). */
  stopTimers(): void {
    for (const c of this.#circuits.values()) {
      if (c.timer !== undefined) this.#clock.clearTimeout(c.timer)
      c.timer = undefined
    }
  }

  /** Every breaker not closed, with what it holds (for metrics and inspection). */
  states(): { route: string; state: CircuitState; held: number }[] {
    const out: { route: string; state: CircuitState; held: number }[] = []
    for (const c of this.#circuits.values()) {
      if (c.state !== 'closed') out.push({ route: c.route, state: c.state, held: c.held.length })
    }
    return out
  }

  /** The held message with post number `seq`, if any. */
  find(seq: number): Envelope | undefined {
    for (const c of this.#circuits.values()) {
      const m = c.held.heapArray.find((h) => h.seq === seq)
      if (m !== undefined) return m
    }
    return undefined
  }

  /** Removes a held message (cancelled); false when no breaker holds it. */
  remove(m: Envelope): boolean {
    const c = this.#circuits.get(this.#routeOf(m))
    if (c === undefined || !c.held.remove(m)) return false
    this.#held--
    return true
  }

  /** Removes every held message and stops every timer (a stop without drain). */
  clear(): Envelope[] {
    const all: Envelope[] = []
    for (const c of this.#circuits.values()) {
      if (c.timer !== undefined) this.#clock.clearTimeout(c.timer)
      for (const m of c.held.toArray()) all.push(m) // not push(...): a spread of 100k+ arguments throws RangeError
      c.held.clear()
    }
    this.#circuits.clear()
    this.#held = 0
    this.#tripped = 0
    return all
  }

  #routeOf(m: Envelope): string {
    const policy = this.#policyFor(m.type)
    return policy !== false && policy.per === 'route' && m.routeKey !== undefined ? `${m.type}/${m.routeKey}` : m.type
  }

  #rate(c: Circuit, now: number): number {
    const events = c.window.events(now)
    return events === 0 ? 0 : c.window.hits(now) / events
  }

  #open(c: Circuit, reason: CircuitChange['reason'], cooldownMs = c.policy.cooldownMs): void {
    c.probes.clear()
    c.successes = 0
    const previous = c.state
    if (previous === 'closed') this.#tripped++
    c.state = 'open'
    c.timer = this.#clock.setTimeout(() => this.#halfOpen(c), cooldownMs)
    this.#changed(c, previous, reason, cooldownMs)
  }

  #halfOpen(c: Circuit): void {
    c.timer = undefined
    c.state = 'half-open'
    this.#changed(c, 'open', 'cooldown')
    if (this.#circuits.get(c.route) !== c) return // a listener stopped the loop: cleared
    while (c.probes.size < c.policy.probes && c.held.length > 0) {
      const m = this.#unhold(c)
      c.probes.add(m)
      this.#host.release(m)
    }
  }

  #close(c: Circuit, reason: CircuitChange['reason'] = 'probes-succeeded'): void {
    this.#tripped--
    const previous = c.state
    c.state = 'closed'
    c.consecutive = 0
    c.successes = 0
    c.probes.clear()
    c.window.reset()
    this.#changed(c, previous, reason)
    if (this.#circuits.get(c.route) !== c) return // a listener stopped the loop: cleared
    while (c.held.length > 0) this.#host.release(this.#unhold(c))
  }

  #unhold(c: Circuit): Envelope {
    this.#held--
    return c.held.pop() as Envelope
  }

  #changed(c: Circuit, previous: CircuitState, reason: CircuitChange['reason'], cooldownMs?: number): void {
    const now = this.#clock.now()
    this.#host.changed({
      ...(cooldownMs === undefined ? {} : { cooldownMs }),
      route: c.route,
      type: c.type,
      state: c.state,
      previous,
      reason,
      consecutiveFailures: c.consecutive,
      failureRate: this.#rate(c, now),
      held: c.held.length,
    })
  }
}
