/**
 * Inspection contracts: what `loop.inspect()` reports of a running loop — its key lanes and their
 * holders, the running handlers, the key groups and the rate limits — read on demand, at no cost per
 * message.
 *
 * @module
 */
import type { RateLimitScope } from './flow.js'
import type { MessageKey } from './message.js'
import type { MessageTrace } from './traces.js'

/**
 * The message that holds a busy key: later messages of the key wait behind it.
 *
 * @group Inspection
 */
export interface KeyHolder {
  /** The message's id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /**
   * What it does with the key:
   * - `running`: its handler runs;
   * - `held`: its route's circuit breaker is open, or its type is paused (`loop.controls.pauseType`);
   * - `retrying`: it backs off before an ordered retry (its key kept so the key's order holds);
   * - `rate-limited`: it waits for capacity with its key kept — a rate-limit budget or a retry-after
   *   pause, room in its key group, or (released from a hold, a back-off or a limit) a free worker.
   */
  readonly state: 'running' | 'held' | 'retrying' | 'rate-limited'
  /**
   * Loop clock (ms) when it entered that state. For `running`, its attempt's start. Otherwise the time
   * of its trace's last recorded transition — messages that are held or retried are always traced, so
   * this is when the hold or the back-off began — and, for an untraced message (a rate limit's wait
   * under `traces: 'failures'`), when it entered the queue: no time is written per message for this.
   */
  readonly since: number
  /** Its attempt: the one running, or the one it makes next. */
  readonly attempt: number
}

/**
 * One key: who holds it, and how many of its messages wait behind the holder.
 *
 * @group Inspection
 */
export interface KeyLane {
  /** The key. */
  readonly key: MessageKey
  /**
   * The message holding it; `undefined` for a key that just came free, whose next message competes for
   * a worker while the rest of its lane still waits.
   */
  readonly holder: KeyHolder | undefined
  /**
   * Messages of this key parked behind the holder. Parking is lazy: a message of a busy key is parked
   * when it reaches the front of the queue, so the key's messages still behind other work are not
   * counted here (they are in `loop.queued`).
   */
  readonly waiting: number
}

/**
 * One key group (the loop's `groups` option) and its concurrency limit.
 *
 * @group Inspection
 */
export interface GroupLoad {
  /** The group. */
  readonly group: string
  /** Its attempts running now. */
  readonly running: number
  /** How many of its messages may run at once. */
  readonly limit: number
  /** Its messages that reached the front and wait for room in the group. */
  readonly waiting: number
}

/**
 * One rate-limit budget, or one retry-after pause (and the throttle that follows it).
 *
 * @group Inspection
 */
export interface LimitLoad {
  /** The budget's name, as the `rate-limited` event gives it (`type:charge`, `retry-after:charge`). */
  readonly name: string
  /** Which messages share it; `retry-after` for a pause a `RateLimitError` put on a route, key or group. */
  readonly scope: RateLimitScope | 'retry-after'
  /** Starts allowed per window now: the rule's `max`, after a share among processes or a 429's throttle. */
  readonly max: number
  /** The window (ms). */
  readonly windowMs: number
  /** Starts that count in the current window (entered within the last `windowMs`, or booked). */
  readonly used: number
  /** Messages waiting for it. */
  readonly waiting: number
  /** A retry-after pause's end (loop clock ms) while the pause runs; `undefined` otherwise. */
  readonly until: number | undefined
}

/**
 * One running handler.
 *
 * @group Inspection
 */
export interface RunningMessage {
  /** The message's id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its key, if any. */
  readonly key: MessageKey | undefined
  /** Its route key, if its type has a router. */
  readonly routeKey: string | undefined
  /** The attempt that runs (1 for the first). */
  readonly attempt: number
  /** When the attempt started (loop clock ms). */
  readonly startedAt: number
}

/**
 * Options of `loop.inspect()`.
 *
 * @group Inspection
 */
export interface InspectOptions {
  /**
   * At most this many key lanes: an integer from 0 to 10,000.
   * @defaultValue 20
   */
  readonly keys?: number
  /**
   * A message key whose traces to include (`LoopInspection.traces`): the live and kept finished ones,
   * newest message first, at most 20.
   */
  readonly traceKey?: MessageKey
  /**
   * A trace id whose traces to include: a message and the follow-ups it posted (`ctx.post`), which
   * share its `traceId` — live and kept finished ones, newest first, at most 20. With `traceKey` too,
   * only those of that key.
   */
  readonly traceId?: string
}

/**
 * What `loop.inspect()` reports: a read-only picture of the loop at one instant, plain data.
 *
 * @group Inspection
 */
export interface LoopInspection {
  /** The loop clock (ms) when it was taken. */
  readonly at: number
  /** Every key held now (running, or kept by a message away from a worker). */
  readonly busyKeys: number
  /**
   * The `keys` lanes with the most messages waiting (ties: the longest-held first), each with its
   * busy key's holder.
   */
  readonly keys: readonly KeyLane[]
  /** Every running handler, oldest start first (a timed-out handler that runs on no longer counts). */
  readonly running: readonly RunningMessage[]
  /** Every key group that has messages running or waiting. */
  readonly groups: readonly GroupLoad[]
  /**
   * Every rate-limit budget alive now: the loop-wide ones, every retry-after pause and throttle, and each
   * other budget with starts counting, messages waiting or a wake-up armed (idle ones are left out).
   */
  readonly limits: readonly LimitLoad[]
  /** The traces `options.traceKey` and `options.traceId` select, newest first; empty without either. */
  readonly traces: readonly MessageTrace[]
}
