/**
 * `loop.jobs`: messages by their job key (`post(…, { jobKey })`), until they start running.
 *
 * @module
 */
import type { JobCancelResult, JobInfo, KeyedJob } from '../contracts/jobs.js'
import type { MessageMap } from '../contracts/message.js'
import * as check from '../internal/validate.js'
import type { KeyedJobs } from '../jobs/keyed-jobs.js'

/**
 * Finds and cancels messages by the `jobKey` they were posted with. A message answers to its key from
 * its post until it starts running — wherever it waits: not due yet, due behind its busy key, held by
 * a breaker or a rate limit, backing off before a retry — also after a restart (the journal keeps the
 * key) and after `restore()` of a snapshot. To replace one, post again with the same key (see
 * `JobKeyMode`).
 *
 * @example
 * ```ts
 * loop.postDelayed('payment.timeout', { orderId }, 15 * 60_000, { jobKey: `payment-timeout:${orderId}` })
 * // … the payment arrived:
 * loop.jobs.cancel(`payment-timeout:${orderId}`) // 'cancelled', or 'started' when it is already running
 * ```
 *
 * @group Messages
 * @category Keyed jobs
 */
export class JobKeys<M extends MessageMap = MessageMap> {
  readonly #jobs: KeyedJobs<M>

  /** @internal Use `loop.jobs`. */
  constructor(jobs: KeyedJobs<M>) {
    this.#jobs = jobs
  }

  /** The message waiting under `jobKey`: its id, type, payload, where it waits and when it is due. */
  get(jobKey: string): JobInfo | undefined {
    return this.#jobs.get(jobKey)
  }

  /**
   * Cancels the message waiting under `jobKey`: its outcome becomes `cancelled` and it never runs.
   * @returns `cancelled`; `started` when it is running (nothing changed: its handler goes on);
   *   `unknown` when no message is waiting or running under the key
   */
  cancel(jobKey: string): JobCancelResult {
    return this.#jobs.cancel(jobKey)
  }

  /**
   * The keyed messages that have not started, soonest `dueAt` first — those due now (no `dueAt`: queued,
   * behind their busy key, held by a breaker or a limit) first, ties in post order — at most `limit`
   * (default 100). Costs O(job keys × log job keys) and nothing per message: for an operator's view.
   * @throws InvalidArgumentError when `options` is not an object, names an unknown option, or `limit` is
   * not a non-negative integer
   */
  list(options?: { readonly limit?: number }): KeyedJob[] {
    if (options === undefined) return this.#jobs.list(100)
    const o = check.snapshotOptions('options', options)
    check.checkKnownKeys('options', o, ['limit'])
    return this.#jobs.list(o['limit'] === undefined ? 100 : check.nonNegativeInteger('options.limit', o['limit']))
  }

  /** Job keys naming a message now (waiting or running). */
  get size(): number {
    return this.#jobs.size
  }
}
