/**
 * The admission breaker: what the `reject` level trips so that consumers get room to recover.
 *
 * @module
 */
import { checkCount, checkFunction, checkKnownKeys, checkNonNegative, checkOptions } from './internal/validate.js'

/**
 * `closed` (admission follows the level), `open` (every post refused), `half-open` (probes).
 *
 * @group Admission breaker
 */
export type BreakerState = 'closed' | 'open' | 'half-open'

/**
 * One change of {@link AdmissionBreaker.state}, passed to `onStateChange`.
 *
 * @group Admission breaker
 */
export interface BreakerTransition {
  /** State before. */
  readonly from: BreakerState
  /** State after. */
  readonly to: BreakerState
  /** The fill ratio that caused it. */
  readonly fill: number
  /** Clock time of the change (ms, the controller's `now()`). */
  readonly at: number
}

/**
 * Options of the {@link AdmissionBreaker}, given as `admissionBreaker` to the {@link WatermarkController}.
 *
 * @group Admission breaker
 */
export interface AdmissionBreakerOptions {
  /**
   * Minimum time the breaker stays open after it last tripped, in ms: a finite number ≥ 0.
   * @defaultValue `1000`
   */
  readonly cooldownMs?: number
  /**
   * Posts admitted while half-open before the breaker closes: an integer ≥ 1.
   * @defaultValue `10`
   */
  readonly probes?: number
  /** Called once per state change, after the state changed. */
  readonly onStateChange?: (transition: BreakerTransition) => void
}

const STATES: readonly BreakerState[] = ['closed', 'open', 'half-open']
const CLOSED = 0
const OPEN = 1
const HALF_OPEN = 2
const KNOWN = ['cooldownMs', 'probes', 'onStateChange']

/**
 * Guards admission after the fill reached `reject.enter`.
 *
 * ```text
 *            controller enters `reject`
 *   closed ────────────────────────────▶ open ◀──────────────────────┐
 *     ▲                                   │     controller enters     │
 *     │      fill < reject.exit, level    │     `reject` again        │
 *     │      below `reject`, cooldownMs   ▼     (cooldown restarts)   │
 *     └──── `probes` admitted ──────── half-open ─────────────────────┘
 * ```
 *
 * @remarks Owned and driven by a {@link WatermarkController} (created from its `admissionBreaker` option);
 * {@link WatermarkController.decide} consults it, so one call answers everything. While `open`, every
 * post is refused with {@link Decisions.breakerOpen} even when the level has already fallen; while
 * `half-open`, posts are refused while the fill is at or above `reject.exit`, and otherwise follow the
 * level (a post shed at `shed` is not a probe). Re-entering `reject` while open restarts the cooldown.
 *
 * @group Admission breaker
 */
export class AdmissionBreaker {
  /** Minimum time open after the last trip, in ms. */
  readonly cooldownMs: number
  /** Admissions needed in half-open to close. */
  readonly probes: number
  // Numeric state: the controller's hot path compares integers, never strings.
  #state = CLOSED
  // When it last tripped; the cooldown counts from here.
  #openedAt = 0
  // Probes still to admit before closing (meaningful while half-open).
  #probesLeft = 0
  // How many times it went from closed or half-open to open.
  #trips = 0
  readonly #onStateChange: ((transition: BreakerTransition) => void) | undefined

  /**
   * @internal Created by {@link WatermarkController} from its `admissionBreaker` option.
   * @param options - see {@link AdmissionBreakerOptions}
   */
  constructor(options: AdmissionBreakerOptions = {}) {
    checkOptions('admissionBreaker', options)
    checkKnownKeys('admissionBreaker', options, KNOWN)
    this.cooldownMs =
      options.cooldownMs === undefined ? 1000 : checkNonNegative('admissionBreaker.cooldownMs', options.cooldownMs)
    this.probes = options.probes === undefined ? 10 : checkCount('admissionBreaker.probes', options.probes)
    this.#onStateChange =
      options.onStateChange === undefined
        ? undefined
        : checkFunction<(transition: BreakerTransition) => void>(
            'admissionBreaker.onStateChange',
            options.onStateChange,
          )
  }

  /** The current state. */
  get state(): BreakerState {
    return STATES[this.#state] as BreakerState
  }

  /** How many times the breaker opened (from closed or half-open). */
  get trips(): number {
    return this.#trips
  }

  /** Clock time of the last trip (ms), or `undefined` if it never tripped. */
  get openedAt(): number | undefined {
    return this.#trips === 0 ? undefined : this.#openedAt
  }

  /** @internal True unless closed: the only check the hot path makes when nothing is wrong. */
  get engaged(): boolean {
    return this.#state !== CLOSED
  }

  /** @internal Milliseconds of cooldown left at `at` (0 unless open). */
  cooldownLeft(at: number): number {
    return this.#state === OPEN ? Math.max(0, this.#openedAt + this.cooldownMs - at) : 0
  }

  /** @internal The controller entered `reject`: open, and restart the cooldown. Returns the change to emit. */
  trip(at: number, fill: number): BreakerTransition | undefined {
    const from = this.#state
    this.#openedAt = at
    if (from === OPEN) return undefined
    this.#trips++
    return this.#set(OPEN, fill, at, from)
  }

  /**
   * @internal Whether a post below `reject` may pass the gate; moves open → half-open when allowed.
   * `fillBelowExit`: the fill is below `reject.exit` and the level below `reject`.
   */
  gate(fillBelowExit: boolean, fill: number, now: () => number): boolean {
    if (!fillBelowExit) return false
    if (this.#state === HALF_OPEN) return true
    const at = now()
    if (at - this.#openedAt < this.cooldownMs) return false
    this.#probesLeft = this.probes
    this.#emit(this.#set(HALF_OPEN, fill, at, OPEN))
    return true
  }

  /** @internal A post was admitted through the gate while half-open: count it, close after the last one. */
  probe(fill: number, now: () => number): boolean {
    if (--this.#probesLeft > 0) return false
    this.#emit(this.#set(CLOSED, fill, now(), HALF_OPEN))
    return true
  }

  /** @internal Calls `onStateChange`, if any. */
  emit(transition: BreakerTransition | undefined): void {
    this.#emit(transition)
  }

  #set(to: number, fill: number, at: number, from: number): BreakerTransition {
    this.#state = to
    return { from: STATES[from] as BreakerState, to: STATES[to] as BreakerState, fill, at }
  }

  #emit(transition: BreakerTransition | undefined): void {
    if (transition !== undefined && this.#onStateChange !== undefined) this.#onStateChange(transition)
  }
}
