/**
 * Worker-pool contracts: the autoscaler's options and `workers` events, and the timeout breakers'
 * `timeout-breaker` events.
 *
 * @module
 */

/**
 * `createLoop({ workers: { min, max } })`: the worker count follows the load within `[min, max]`
 * (see the autoscaling guide). Every field but `min` and `max` is optional.
 *
 * @example
 * ```ts
 * const loop = createLoop({ workers: { min: 2, max: 64, intervalMs: 500 } })
 * loop.events.on('workers', (c) => console.log(`${c.from} → ${c.to} (${c.reason})`))
 * ```
 *
 * @group Workers
 */
export interface AutoscaleOptions {
  /** Fewest workers, an integer in 1..65536. */
  readonly min: number
  /** Most workers, an integer in `min`..65536. */
  readonly max: number
  /**
   * Workers at start, within `[min, max]`.
   * @defaultValue `min`
   */
  readonly initial?: number
  /**
   * Time between two samples (ms).
   * @defaultValue 1000
   */
  readonly intervalMs?: number
  /**
   * Least time between two changes (ms); also the window a change is judged on. At least `intervalMs`.
   * @defaultValue 3 × `intervalMs`
   */
  readonly cooldownMs?: number
  /**
   * How much a grow multiplies the count by (at least one worker more), in (1, 4].
   * @defaultValue 1.5
   */
  readonly growFactor?: number
  /**
   * The throughput gain a full grow step must bring to be kept, in (0, 1): below it the loop steps back
   * and remembers the size as a ceiling. A shrink probe that loses more than half of it is undone.
   * @defaultValue 0.1
   */
  readonly minGain?: number
  /**
   * Event-loop utilization (0–1) from which the loop does not grow: the thread is the bottleneck.
   * @defaultValue 0.85
   */
  readonly utilizationCeiling?: number
  /**
   * Consecutive samples with no backlog and fewer than half the workers busy before a shrink.
   * @defaultValue 3
   */
  readonly idleSamples?: number
  /**
   * How long a size found too big (or too small) stays a bound (ms); then the loop explores again.
   * @defaultValue 60_000
   */
  readonly memoryMs?: number
  /**
   * The event-loop utilization since the previous call, 0–1. Inject one on a virtual clock.
   * @defaultValue deltas of `performance.eventLoopUtilization()`
   */
  readonly utilization?: () => number
}

/** {@link AutoscaleOptions} with defaults applied. */
export type ResolvedAutoscale = Required<AutoscaleOptions>

/**
 * Why the worker count changed.
 *
 * - `backlog` — work waited, every worker was busy and the event loop had time to spare: grown.
 * - `no-gain` — the last grow did not raise throughput enough: stepped back (that size becomes a ceiling).
 * - `probe` — saturated but unable to grow: tried fewer workers, to find the knee from above.
 * - `loss` — the probe lost throughput: stepped back (that size becomes a floor).
 * - `idle` — no backlog and most workers idle for `idleSamples` samples: shrunk.
 * - `manual` — `loop.resize()` (which turns the autoscaler off).
 *
 * @group Workers
 */
export type WorkersChangeReason = 'backlog' | 'no-gain' | 'probe' | 'loss' | 'idle' | 'manual'

/**
 * What the `workers` event reports: one per change of the worker count, `from !== to`.
 *
 * @group Workers
 */
export interface WorkersChange {
  /** Workers before. */
  readonly from: number
  /** Workers after. */
  readonly to: number
  /** Why. */
  readonly reason: WorkersChangeReason
  /** When, on the loop's clock (ms). */
  readonly at: number
  /** Messages waiting in the queue at the decision. */
  readonly backlog: number
  /** Handlers running at the decision. */
  readonly running: number
  /** Completed attempts per second at `from` over its window (NaN for `manual`). */
  readonly throughput: number
  /** Event-loop utilization over the last sample, 0–1 (NaN for `manual`). */
  readonly utilization: number
}

/**
 * A breaker's state change, as the `breaker` event reports it.
 *
 * @group Timeouts and stalls
 */
export interface BreakerChange {
  /** The message type. */
  readonly type: string
  /** The new state. */
  readonly state: 'open' | 'half-open' | 'closed'
  /** Consecutive timeouts of the type when it changed. */
  readonly timeouts: number
}
