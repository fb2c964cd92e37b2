/**
 * `loop.schedules`: recurring messages by id.
 *
 * @module
 */
import type { MessageMap, MessageType } from '../contracts/message.js'
import type { ScheduleInfo, ScheduleOptions, ScheduleSpec } from '../contracts/schedules.js'
import type { Schedules as ScheduleStage } from '../jobs/schedules.js'

/**
 * Recurring schedules: cron expressions in IANA time zones or fixed intervals, each fire a normal
 * message (priority, key, retries, dead letters) whose idempotency key — `schedule:<id>@<due time>` —
 * keeps it from running twice. A schedule is held by the message of its next fire, so with a journal
 * store it survives a restart or a `kill -9`, and its missed fires follow `spec.missed`; on the
 * loop's clock, so a `VirtualClock` moves it across months and DST changes in milliseconds.
 *
 * @example
 * ```ts
 * loop.on('report.build', async (msg) => { await buildReport(msg.headers['flowing-fire-at']) })
 * loop.schedule('nightly-report', { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 'report.build', {})
 * loop.schedules.pause('nightly-report')
 * ```
 *
 * @group Schedules
 */
export class Schedules<M extends MessageMap = MessageMap> {
  readonly #stage: ScheduleStage

  /** @internal Use `loop.schedules`. */
  constructor(stage: ScheduleStage) {
    this.#stage = stage
  }

  /**
   * Creates schedule `id`, or replaces it: its next fire is recomputed, with no duplicate fire (the
   * same definition again changes nothing, so calling it at every start is safe). Before `start()` of
   * a loop with a journal it waits for the recovery, which reconciles it with what the journal kept.
   *
   * @param id - a non-empty string of at most 256 characters
   * @param spec - when it fires
   * @param type - the message type of its fires (a handler must be registered)
   * @param payload - the payload of every fire (JSON-serializable)
   * @param options - the post options of every fire
   * @returns the schedule, with its next due time
   * @throws InvalidArgumentError (a bad cron expression, an unknown time zone, `every` ≤ 0, an end
   *   before the start, an unknown option) and UnknownMessageTypeError; nothing is registered then
   */
  upsert<T extends MessageType<M>>(
    id: string,
    spec: ScheduleSpec,
    type: T,
    payload: M[T],
    options?: ScheduleOptions,
  ): ScheduleInfo {
    return this.#stage.upsert(id, spec, type, payload, options)
  }

  /** Removes schedule `id` (its next fire is cancelled); false when there is none. */
  remove(id: string): boolean {
    return this.#stage.remove(id)
  }

  /** Pauses schedule `id` (kept by a journal too); false when there is none. */
  pause(id: string): boolean {
    return this.#stage.pause(id)
  }

  /** Resumes schedule `id`: its next fire is the first due time from now; false when there is none. */
  resume(id: string): boolean {
    return this.#stage.resume(id)
  }

  /** Schedule `id`: its definition, runs so far, next due time. */
  get(id: string): ScheduleInfo | undefined {
    return this.#stage.get(id)
  }

  /** Every schedule, by id. */
  list(): ScheduleInfo[] {
    return this.#stage.list()
  }
}
