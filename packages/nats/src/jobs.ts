/**
 * `natsLoop.jobs`: messages by their job key, across the processes of a NATS loop.
 *
 * @module
 */
import type { JobCancelResult } from '@flowing/core'
import type { NatsJobs } from './internal/job-keys.js'

/**
 * Finds and cancels messages posted with a `jobKey` (`post`, `postDelayed`), from any process of the
 * loop, until they start running: while delayed, and once due while they wait in their partition. A
 * post with the key of a waiting message replaces it (`jobKeyMode`: `replace`, `preserve_run_at`,
 * `debounce` with `maxWaitMs`). A replaced or cancelled message is dropped when it comes due, or
 * acknowledged without running when a process would start it (`metrics().jobsSkipped`). A failed
 * attempt makes its retry cancellable again. The key travels as the header `flowing-job-key`.
 *
 * @example
 * ```ts no-run
 * await loop.postDelayed('order.timeout', { orderId }, 15 * 60_000, { jobKey: `timeout:${orderId}` })
 * // … in any process, once the order is paid:
 * await loop.jobs.cancel(`timeout:${orderId}`) // 'cancelled', 'started' or 'unknown'
 * ```
 *
 * @group NATS loop
 */
export class NatsJobKeys {
  readonly #jobs: NatsJobs

  /** @internal Use `natsLoop.jobs`. */
  constructor(jobs: NatsJobs) {
    this.#jobs = jobs
  }

  /** The message `jobKey` names: its distributed id, whether it started, its due time (epoch ms). */
  get(jobKey: string): Promise<{ id: string; state: 'waiting' | 'started'; dueAt: number | undefined } | undefined> {
    return this.#jobs.get(jobKey)
  }

  /** Cancels the message `jobKey` names: `cancelled`, `started` (too late) or `unknown`. */
  cancel(jobKey: string): Promise<JobCancelResult> {
    return this.#jobs.cancel(jobKey)
  }
}
