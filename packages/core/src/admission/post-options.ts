import { warnDeprecated } from '@flowing/errors'
import type { JobKeyMode } from '../contracts/jobs.js'
import type { PostOptions, SendOptions } from '../contracts/message.js'
import { MAX_PRIORITY } from '../contracts/priority.js'
import { InvalidArgumentError } from '../errors.js'
import { checkRetryOptions } from '../failure/retry-policy.js'
import { checkHeaders } from '../headers.js'
import * as check from '../internal/validate.js'
import { OVERFLOW_POLICIES } from '../options/resolve.js'

/**
 * Validates per-post options without allocating: this runs on every post, so the accepted case is a
 * handful of `typeof` checks and one `for…in`; only a bad value reaches the general validators, which
 * build the error.
 *
 * @throws InvalidArgumentError naming the first bad option
 */
export function checkPostOptions(options: SendOptions | undefined, forSend: boolean): void {
  if (options === undefined) return
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError('options', 'an object', options)
  }
  for (const name in options) {
    if (!isPostKey(name) && !(forSend && (name === 'waitTimeoutMs' || name === 'timeoutMs'))) {
      check.knownKeys('options', options as Record<string, unknown>, forSend ? SEND_KEYS : POST_KEYS)
    }
  }
  const { key, priority, overflow } = options
  if (key !== undefined && typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) {
    throw new InvalidArgumentError('options.key', 'a string or a finite number', key)
  }
  // `(p | 0) === p` rejects NaN, ±Infinity, fractions and non-numbers in one comparison.
  if (
    priority !== undefined &&
    !(typeof priority === 'number' && (priority | 0) === priority && priority >= 0 && priority <= MAX_PRIORITY)
  ) {
    check.priority('options.priority', priority)
  }
  if (overflow !== undefined) check.oneOf('options.overflow', overflow, OVERFLOW_POLICIES)
  const timeout = options.handlerTimeoutMs
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0)) {
    throw new InvalidArgumentError('options.handlerTimeoutMs', 'a positive number of ms or Infinity', timeout)
  }
  if (options.retry !== undefined) checkRetryOptions('options.retry', options.retry)
  const idem = options.idempotencyKey
  if (idem !== undefined && !(typeof idem === 'string' && idem.length > 0)) {
    throw new InvalidArgumentError('options.idempotencyKey', 'a non-empty string', idem)
  }
  if (options.headers !== undefined) checkHeaders('options.headers', options.headers)
  const group = options.group
  if (group !== undefined && !(typeof group === 'string' && group.length > 0 && group.length <= 256)) {
    throw new InvalidArgumentError('options.group', 'a non-empty string of at most 256 characters', group)
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new InvalidArgumentError('options.signal', 'an AbortSignal', options.signal)
  }
  if (options.jobKey !== undefined || options.jobKeyMode !== undefined || options.maxWaitMs !== undefined)
    checkJobOptions(options)
  if (!forSend) return
  if (options.waitTimeoutMs !== undefined) {
    check.nonNegativeNumber('options.waitTimeoutMs', options.waitTimeoutMs, false)
  }
  if (options.timeoutMs !== undefined) oldWaitTimeout(options)
}

// One comparison chain, inlined by V8 (a `Set` lookup costs more on every post with options).
function isPostKey(name: string): boolean {
  return (
    name === 'key' ||
    name === 'priority' ||
    name === 'overflow' ||
    name === 'handlerTimeoutMs' ||
    name === 'retry' ||
    name === 'idempotencyKey' ||
    name === 'headers' ||
    name === 'group' ||
    name === 'signal' ||
    name === 'jobKey' ||
    name === 'jobKeyMode' ||
    name === 'maxWaitMs'
  )
}

const JOB_KEY_MODES: readonly JobKeyMode[] = ['replace', 'preserve_run_at', 'debounce']

// `jobKey`, `jobKeyMode`, `maxWaitMs`: a mode needs a key, `maxWaitMs` needs `debounce`.
function checkJobOptions(options: PostOptions): void {
  const { jobKey, jobKeyMode, maxWaitMs } = options
  if (!(typeof jobKey === 'string' && jobKey.length > 0 && jobKey.length <= 512)) {
    const rule = 'a non-empty string of at most 512 characters'
    throw new InvalidArgumentError(
      'options.jobKey',
      jobKey === undefined ? `${rule} (jobKeyMode and maxWaitMs need one)` : rule,
      jobKey,
    )
  }
  if (jobKeyMode !== undefined) check.oneOf('options.jobKeyMode', jobKeyMode, JOB_KEY_MODES)
  if (maxWaitMs === undefined) return
  if (jobKeyMode !== 'debounce') {
    throw new InvalidArgumentError('options.maxWaitMs', "absent unless jobKeyMode is 'debounce'", maxWaitMs)
  }
  if (!(typeof maxWaitMs === 'number' && maxWaitMs > 0 && Number.isFinite(maxWaitMs))) {
    throw new InvalidArgumentError('options.maxWaitMs', 'a positive finite number of ms', maxWaitMs)
  }
}

const POST_KEYS = [
  'key',
  'priority',
  'overflow',
  'handlerTimeoutMs',
  'retry',
  'idempotencyKey',
  'headers',
  'group',
  'signal',
  'jobKey',
  'jobKeyMode',
  'maxWaitMs',
]
const SEND_KEYS = [...POST_KEYS, 'waitTimeoutMs', 'timeoutMs']

// `send()`'s old `timeoutMs`: checked, refused beside `waitTimeoutMs`, warned about once.
function oldWaitTimeout(options: SendOptions): void {
  if (options.waitTimeoutMs !== undefined) {
    const rule = 'absent when `options.waitTimeoutMs` is given (`timeoutMs` is its deprecated name)'
    throw new InvalidArgumentError('options.timeoutMs', rule, options.timeoutMs)
  }
  check.nonNegativeNumber('options.timeoutMs', options.timeoutMs, false)
  warnDeprecated(
    'FLOWING_DEP_SEND_TIMEOUT',
    "`send()`'s `options.timeoutMs` is deprecated: use `options.waitTimeoutMs`.",
  )
}
