/**
 * The checks of a post's arguments, before anything is published: a wrong value is an
 * `InvalidArgumentError` naming it, and nothing reaches the stream.
 *
 * @module
 */
import {
  checkHeaders,
  InvalidArgumentError,
  type JobPostOptions,
  type MessageHeaders,
  type MessageKey,
  type PriorityLevel,
  type RetryOptions,
} from '@flowing/core'
import { argumentChecks } from '@flowing/errors'

/**
 * The options of a post to a distributed loop.
 *
 * @group NATS loop
 */
export interface NatsPostOptions extends JobPostOptions {
  /** Partition key: messages with the same key run one at a time, across every process, in post order. */
  readonly key?: MessageKey | undefined
  /** Urgency, 0 (most urgent) to 9: orders what one process holds (see the scale-out guide). */
  readonly priority?: PriorityLevel | undefined
  /**
   * Idempotency key: the server drops a re-post within its duplicate window (`Nats-Msg-Id`), and the
   * shared ledger lets a key run to an end once.
   */
  readonly idempotencyKey?: string | undefined
  /** Retry policy for this message, over its type's and the loop's. */
  readonly retry?: RetryOptions | undefined
  /** Handler deadline for this message (ms). */
  readonly handlerTimeoutMs?: number | undefined
  /**
   * Headers of the message (core's `MessageHeaders`): they travel in the message's body, beside its
   * payload. A follow-up inherits its parent's; the ones given override them by name.
   */
  readonly headers?: MessageHeaders | undefined
}

const KNOWN = [
  'key',
  'priority',
  'idempotencyKey',
  'retry',
  'handlerTimeoutMs',
  'headers',
  'jobKey',
  'jobKeyMode',
  'maxWaitMs',
] as const
const check = argumentChecks(InvalidArgumentError)

/** Checks a post's type and options. */
export function checkPost(type: unknown, options: NatsPostOptions | undefined): void {
  if (typeof type !== 'string' || type === '') throw new InvalidArgumentError('type', 'a non-empty string', type)
  if (options === undefined) return
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options)
  check.knownKeys('options', options, KNOWN)
  const { key, priority, idempotencyKey, handlerTimeoutMs } = options
  if (key !== undefined && typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) {
    throw new InvalidArgumentError('options.key', 'a string or a finite number', key)
  }
  if (priority !== undefined) check.integer('options.priority', priority, { min: 0, max: 9 })
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey === '')) {
    throw new InvalidArgumentError('options.idempotencyKey', 'a non-empty string', idempotencyKey)
  }
  if (handlerTimeoutMs !== undefined)
    check.number('options.handlerTimeoutMs', handlerTimeoutMs, { above: 0, finite: false })
  if (options.headers !== undefined) checkHeaders('options.headers', options.headers)
  if (options.headers?.['flowing-job-key'] !== undefined) {
    throw new InvalidArgumentError(
      'options.headers',
      'headers without `flowing-job-key` (give `jobKey`)',
      options.headers,
    )
  }
  checkJob(options)
}

const MODES = ['replace', 'preserve_run_at', 'debounce']

// `jobKey`, `jobKeyMode`, `maxWaitMs`, as core checks them.
function checkJob(o: NatsPostOptions): void {
  const { jobKey, jobKeyMode, maxWaitMs } = o
  if (jobKey === undefined && jobKeyMode === undefined && maxWaitMs === undefined) return
  if (!(typeof jobKey === 'string' && jobKey.length > 0 && jobKey.length <= 512))
    throw new InvalidArgumentError('options.jobKey', 'a non-empty string of at most 512 characters', jobKey)
  if (jobKeyMode !== undefined) check.oneOf('options.jobKeyMode', jobKeyMode, MODES)
  if (maxWaitMs === undefined) return
  if (jobKeyMode !== 'debounce')
    throw new InvalidArgumentError('options.maxWaitMs', "absent unless jobKeyMode is 'debounce'", maxWaitMs)
  check.number('options.maxWaitMs', maxWaitMs, { above: 0, finite: true })
}

/** Checks a delay (ms). */
export function checkDelay(delayMs: unknown): number {
  return check.number('delayMs', delayMs, { min: 0 })
}
