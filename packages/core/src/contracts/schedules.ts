/**
 * Recurring schedules: what `loop.schedule()` takes, what `loop.schedules` reports, and what a
 * snapshot or a journal keeps of a schedule between its fires.
 *
 * @module
 */
import type { MessageHeaders, MessageKey } from './message.js'
import type { PriorityLevel } from './priority.js'
import type { RetryOptions } from './retry.js'

/**
 * What a schedule does with the fires it missed while no process ran it (a restart after a crash or a
 * planned stop):
 * - `'skip'` — none runs; the next fire is the first due time after the restart.
 * - `'run-once'` — the most recent missed fire runs, once, at once (the default).
 * - `{ backfill: n }` — the `n` most recent missed fires run, oldest first (graphile-worker's backfill).
 *
 * A fire that was already due (in the queue) when the process stopped is not missed: it runs.
 *
 * @group Schedules
 */
export type MissedFires = 'skip' | 'run-once' | { readonly backfill: number }

/**
 * When a schedule fires: a cron expression in an IANA time zone, or a fixed interval; within an
 * optional window, a number of runs, with jitter.
 *
 * @example
 * ```ts
 * loop.schedule('nightly-report', { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 'report.build', {})
 * loop.schedule('heartbeat', { every: 30_000, jitterMs: 1_000 }, 'ping', {})
 * ```
 *
 * @group Schedules
 */
export interface ScheduleSpec {
  /**
   * A cron expression (croner's syntax): 5 fields (minute hour day-of-month month day-of-week) or 6
   * (seconds first); `L` (last day of the month, or last weekday `5L`), `W` (nearest weekday, `15W`),
   * `#` (nth weekday, `1#2`), `?`, ranges, steps, names (`MON`, `JAN`) and nicknames (`@yearly`,
   * `@monthly`, `@weekly`, `@daily`, `@hourly`). When both day fields are restricted either one matches
   * (as Vixie cron). Exactly one of `cron` and `every`.
   */
  readonly cron?: string | undefined
  /** A fixed interval in ms (finite, ≥ 1): fires at `startAt` + k · `every`, or from one interval after registration. */
  readonly every?: number | undefined
  /**
   * The IANA time zone a cron expression is read in (`Europe/Berlin`). Across DST changes an expression
   * naming one time of day fires once a day: a time the spring-forward gap skips fires when the gap ends
   * (02:30 → 03:00), a time the fall-back hour repeats fires at its first occurrence only. Several times
   * or steps inside the changing hour follow the local clock (as Vixie cron). Cron only.
   * @defaultValue `'UTC'`
   */
  readonly tz?: string | undefined
  /** No fire before this time (ms since the Unix epoch, or a `Date`); inclusive. */
  readonly startAt?: number | Date | undefined
  /** No fire at or after this time (ms since the Unix epoch, or a `Date`); after it the schedule ends. */
  readonly endAt?: number | Date | undefined
  /** At most this many fires (an integer ≥ 1), then the schedule ends. */
  readonly limit?: number | undefined
  /** Each fire is delayed by a random 0 – `jitterMs` ms past its due time (its idempotency key keeps the due time). */
  readonly jitterMs?: number | undefined
  /**
   * What happens to fires missed while no process ran the loop.
   * @defaultValue `'run-once'`
   */
  readonly missed?: MissedFires | undefined
}

/**
 * The post options of each fire (its `idempotencyKey` is the schedule's: `schedule:<id>@<due time ISO>`).
 *
 * @group Schedules
 */
export interface ScheduleOptions {
  /** Partition key of every fire. */
  readonly key?: MessageKey | undefined
  /** Priority of every fire. */
  readonly priority?: PriorityLevel | undefined
  /** Handler deadline of every fire. */
  readonly handlerTimeoutMs?: number | undefined
  /** Retry policy of every fire. */
  readonly retry?: RetryOptions | undefined
  /** Headers of every fire, besides `flowing-schedule` (the id) and `flowing-fire-at` (the due time). */
  readonly headers?: MessageHeaders | undefined
  /** Key group of every fire. */
  readonly group?: string | undefined
}

/**
 * A schedule as `loop.schedules.get()` and `list()` report it.
 *
 * @group Schedules
 */
export interface ScheduleInfo {
  /** Its id. */
  readonly id: string
  /** The message type of its fires. */
  readonly type: string
  /** The payload of its fires. */
  readonly payload: unknown
  /** When it fires (times as ms since the Unix epoch). */
  readonly spec: ScheduleSpec
  /** The post options of its fires. */
  readonly options: ScheduleOptions
  /** Fires so far. */
  readonly runs: number
  /** Whether it is paused. */
  readonly paused: boolean
  /** The due time of its next fire (ms since the Unix epoch), or undefined when paused or waiting for `start()`. */
  readonly nextAt: number | undefined
}

/**
 * A schedule between two fires, as a snapshot or a journal keeps it: carried by the message of its
 * next fire, so a schedule survives what a message survives.
 *
 * @group Shutdown
 */
export interface ScheduleState {
  /** The schedule's id. */
  readonly id: string
  /** Its spec (times as ms since the Unix epoch). */
  readonly spec: ScheduleSpec
  /** The post options of its fires. */
  readonly options?: ScheduleOptions
  /** For `every` without `startAt`: the time of its first fire. */
  readonly anchorEpochMs?: number
  /** Fires before this one. */
  readonly runs: number
  /** The due time this message fires for (ms since the Unix epoch). */
  readonly nominalEpochMs: number
  /** Paused: this message holds the schedule and never fires. */
  readonly paused?: boolean
}
