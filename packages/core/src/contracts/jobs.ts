/**
 * Keyed jobs: the post options that give a message a job key — found, cancelled, replaced or debounced
 * by that key until it starts running — and what a snapshot or a journal keeps of it.
 *
 * @module
 */

/**
 * What a post with a `jobKey` does to the message already waiting under that key (one that has not
 * started running), as graphile-worker's `job_key_mode`:
 * - `replace` — the waiting message is cancelled; the new one takes its place with its own payload and
 *   due time (its delay, or at once).
 * - `preserve_run_at` — the waiting message is cancelled; the new one carries the new payload but keeps
 *   the old due time (one already due enters the queue at once).
 * - `debounce` — as `replace`, so each post pushes the due time out by its own delay; with `maxWaitMs`,
 *   never later than `maxWaitMs` after the first post of the burst.
 *
 * With nothing waiting under the key (none posted, or the last one started running already), every
 * mode posts the new message as given.
 *
 * @group Messages
 * @category Keyed jobs
 */
export type JobKeyMode = 'replace' | 'preserve_run_at' | 'debounce'

/**
 * The job-key options of a post (part of `PostOptions`).
 *
 * @group Messages
 * @category Keyed jobs
 */
export interface JobPostOptions {
  /**
   * Job key: a business key (`payment-timeout:order-42`) under which the message can be found
   * (`loop.jobs.get`), cancelled (`loop.jobs.cancel`) and replaced by a later post with the same key
   * until it starts running — wherever it waits: on the timing wheel, due behind its busy key, held
   * by a breaker or a rate limit, backing off before a retry, in a snapshot or in the journal. At
   * most 512 characters. Independent of `key` (the partition key) and of `idempotencyKey`.
   */
  readonly jobKey?: string | undefined
  /**
   * What the post does to a message waiting under the same `jobKey`; requires `jobKey`.
   * @defaultValue `'replace'`
   */
  readonly jobKeyMode?: JobKeyMode | undefined
  /**
   * With `jobKeyMode: 'debounce'` only: the longest a burst of posts may push the message out,
   * counted from the first post of the burst (ms, > 0, finite).
   */
  readonly maxWaitMs?: number | undefined
}

/**
 * The job key of an unfinished message, as a snapshot or a journal record keeps it.
 *
 * @group Shutdown
 */
export interface JobState {
  /** The job key. */
  readonly key: string
  /** A debounced burst's latest due time (ms since the Unix epoch), when it was posted with `maxWaitMs`. */
  readonly untilEpochMs?: number
}

/**
 * What `loop.jobs.get(jobKey)` reports of the message waiting under a job key.
 *
 * @group Messages
 * @category Keyed jobs
 */
export interface JobInfo {
  /** The message's id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its payload. */
  readonly payload: unknown
  /**
   * Where it waits: `delayed` (not due yet), `waiting` (due: queued, behind its busy key, held by a
   * breaker or a limit) or `retry-scheduled` (backing off before its next attempt).
   */
  readonly state: 'delayed' | 'waiting' | 'retry-scheduled'
  /** For `delayed` and `retry-scheduled`: the clock time (ms) it is due. */
  readonly dueAt?: number | undefined
}

/**
 * One entry of `loop.jobs.list()`: a keyed message that has not started, with its job key.
 *
 * @group Messages
 * @category Keyed jobs
 */
export interface KeyedJob extends JobInfo {
  /** The job key it was posted with. */
  readonly jobKey: string
}

/**
 * What `loop.jobs.cancel(jobKey)` did: `cancelled` (it was waiting: its outcome is `cancelled`),
 * `started` (it is running: too late, nothing changed), `unknown` (no message waiting or running under
 * that key: none was posted, or it finished).
 *
 * @group Messages
 * @category Keyed jobs
 */
export type JobCancelResult = 'cancelled' | 'started' | 'unknown'
