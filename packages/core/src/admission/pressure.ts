/**
 * Watermark backpressure in the loop: the `@flowing/backpressure` controller fed with the queue's fill,
 * asked once per post, and turned into typed refusals.
 *
 * @module
 */
import {
  BackpressureArgumentError,
  type Decision,
  describeValue,
  type PressureTransition,
  WatermarkController,
  type WatermarkControllerOptions,
  type WatermarkStats,
} from '@flowing/backpressure'
import type { Rename } from '@flowing/errors'
import type { Clock } from '../contracts/clock.js'
import type { BackpressureOptions } from '../contracts/options.js'
import { Priority } from '../contracts/priority.js'
import { BackpressureError, type BackpressureState, InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

/** The loop's pressure gauge and admission policy. */
export class LoopPressure {
  readonly #controller: WatermarkController
  readonly #capacity: number
  readonly #shedAbove: number
  readonly #clock: Clock
  // Queue lengths below this cannot move the level while it is `normal` (the warn mark, in messages):
  // feeding such a length would change nothing, so `update` skips it. True only at level `normal`.
  readonly #calmBelow: number
  #calm = true

  /**
   * @param options - `true` for the defaults, or the options
   * @param capacity - the loop's capacity (fill = queued ÷ capacity)
   * @param clock - the loop's clock
   * @param onTransition - called once per level crossing
   */
  constructor(
    options: true | BackpressureOptions,
    capacity: number,
    clock: Clock,
    onTransition: (t: PressureTransition) => void,
  ) {
    const { shedAbove = Priority.high, ...marks } = options === true ? {} : options
    this.#shedAbove = check.priority('options.backpressure.shedAbove', shedAbove)
    this.#capacity = capacity
    this.#clock = clock
    this.#controller = new WatermarkController({ ...marks, now: () => clock.now(), onTransition })
    this.#calmBelow = this.#controller.watermarks.warn.enter * capacity
  }

  /** The current level. */
  get level(): PressureTransition['to'] {
    return this.#controller.level
  }

  /**
   * How many more posts of `priority` the loop wants now (the WHATWG `desiredSize`): up to the shed
   * mark while they would be admitted (at least 1), else how far the queue is above the shed exit mark
   * (≤ 0) — by hysteresis, a shed level only ends below its exit mark.
   */
  desiredSize(queued: number, priority: number): number {
    const { shed } = this.#controller.watermarks
    if (this.admits(priority, queued)) return Math.max(1, Math.floor(shed.enter * this.#capacity) - queued)
    return Math.min(0, Math.floor(shed.exit * this.#capacity) - queued)
  }

  /** Milliseconds until an open breaker may let probes through, or `undefined` when it is not open. */
  get breakerCooldownLeft(): number | undefined {
    const breaker = this.#controller.breaker
    return breaker?.state === 'open' ? breaker.cooldownLeft(this.#clock.now()) : undefined
  }

  /** Feeds the queue length after a change (one level step, one event per crossing). */
  update(queued: number): void {
    if (this.#calm && queued < this.#calmBelow) return // at `normal` below the warn mark: nothing moves
    this.#calm = this.#controller.update(queued / this.#capacity) === 'normal'
  }

  /** Decides one post (counted in the level's metrics). */
  decide(queued: number, priority: number): Decision {
    const decision = this.#controller.decide(queued / this.#capacity, priority, this.#shedAbove)
    this.#calm = this.#controller.level === 'normal'
    return decision
  }

  /**
   * The controller's figures, with the fill of `queued`: lengths that could move nothing were not fed
   * (see `update`), so a calm controller is fed the current one first — which moves nothing either.
   */
  stats(queued: number): WatermarkStats {
    if (this.#calm) this.#controller.update(queued / this.#capacity)
    return this.#controller.stats()
  }

  /**
   * Whether a post of `priority` would pass now, without counting it (for waiting producers and
   * `ready`). An open breaker passes once cooled down with the fill below the reject exit mark (the
   * post then becomes a probe).
   */
  admits(priority: number, queued: number): boolean {
    const breaker = this.#controller.breaker
    if (breaker?.state === 'open') {
      const belowExit = queued / this.#capacity < this.#controller.watermarks.reject.exit
      if (!belowExit || breaker.cooldownLeft(this.#clock.now()) > 0) return false
    }
    const level = this.#controller.level
    return level === 'normal' || level === 'warn' || (level === 'shed' && priority <= this.#shedAbove)
  }

  /** Builds (on call) the typed refusal for a decision that did not admit, with the numbers of now. */
  refusal(type: string, priority: number, decision: Decision, queued: number): () => BackpressureError {
    const pressure = refusedPressure(this.#controller, decision, queued / this.#capacity, this.#shedAbove)
    return () => new BackpressureError(type, priority, pressure)
  }
}

/**
 * What a watermark refusal reports (a `BackpressureError`'s `pressure`): the controller's level and
 * retry hint, the decision's cause, the fill that was decided on, the shed threshold.
 *
 * @remarks For transports that run their own controller over another fill (`@flowing/nats` over its
 * work stream), so their refusals read like the loop's own.
 *
 * @param controller - the controller that decided
 * @param decision - its decision, one that did not admit
 * @param fill - the fill (0–1) it decided on
 * @param shedAbove - posts with a priority number above this are shed at level `shed`
 *
 * @group Backpressure
 */
export function refusedPressure(
  controller: WatermarkController,
  decision: Decision,
  fill: number,
  shedAbove: number,
): BackpressureState {
  return {
    level: controller.level,
    cause: decision.cause === 'breaker' ? 'breaker' : decision.outcome === 'shed' ? 'shed' : 'reject',
    fill,
    retryAfterMs: controller.retryAfterMs,
    shedAbove,
  }
}

// The controller's options the loop supplies itself, and where a user finds them instead.
const SUPPLIED: Readonly<Record<string, string>> = {
  now: "absent: the loop's `clock` option is its time source",
  onTransition:
    "absent: the loop reports each transition as its `backpressure` event (`loop.events.on('backpressure', …)`)",
}
const KNOWN = ['warn', 'shed', 'reject', 'minDwellMs', 'maxRetryAfterMs', 'admissionBreaker', 'shedAbove']
// The controller's renamed option, renamed here so the loop's error names the whole path.
const RENAMES: readonly Rename[] = [{ from: 'breaker', to: 'admissionBreaker', code: 'FLOWING_DEP_ADMISSION_BREAKER' }]

/**
 * Validates the `backpressure` loop option, with core's {@link InvalidArgumentError} naming the full
 * path (`options.backpressure.shed.exit`), never the controller's own error or names.
 * @throws InvalidArgumentError for a wrong type, an unknown or loop-supplied key, or a bad mark
 */
export function checkBackpressure(name: string, value: unknown): false | true | BackpressureOptions {
  if (value === false || value === true) return value
  const o = check.optionGroup(name, value, KNOWN, SUPPLIED, RENAMES)
  const { shedAbove, ...marks } = o
  if (shedAbove !== undefined) check.priority(`${name}.shedAbove`, shedAbove)
  try {
    new WatermarkController({ ...(marks as WatermarkControllerOptions), now: () => 0 }) // validates every mark
  } catch (error) {
    throw error instanceof BackpressureArgumentError ? reframe(name, error) : error
  }
  return o as BackpressureOptions
}

// The controller's argument error as core's, under `name`: `shed.exit` becomes `options.backpressure.shed.exit`,
// in the rule too ("below `options.backpressure.shed.enter` (0.5)").
function reframe(name: string, error: BackpressureArgumentError): InvalidArgumentError {
  const head = `Expected \`${error.argument}\` to be `
  const tail = `, got ${describeValue(error.value)}`
  const { message } = error
  const rule =
    message.startsWith(head) && message.endsWith(tail)
      ? message.slice(head.length, message.length - tail.length)
      : `valid (${message})`
  const path = (key: string) => `\`${name}.${key}\``
  return new InvalidArgumentError(
    `${name}.${error.argument}`,
    rule.replace(/`((?:warn|shed|reject|admissionBreaker|breaker)\.[A-Za-z]+)`/g, (_, key: string) => path(key)),
    error.value,
  )
}
