/**
 * The one builder of a dead letter's body: the loop's failure path and a transport that dead-letters
 * a message it could not run (`@flowing/nats` after `maxDeliveries` deliveries without an outcome)
 * write letters of one shape, with both clock readings.
 *
 * @module
 */

import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { AttemptRecord, DeadLetter, ErrorInfo } from '../contracts/failures.js'

/**
 * What a dead letter says of its message.
 *
 * @group Failure handling
 * @category Dead letters
 */
export type DeadLetterSubject = Pick<
  DeadLetter,
  'id' | 'type' | 'payload' | 'key' | 'priority' | 'routeKey' | 'traceId'
>

/**
 * The dead letter of `m`, which failed for good with `error`: `non-retryable` when the error was
 * classified so, else `exhausted`; stamped `at` on `clock` and with `clock`'s wall-clock time.
 *
 * @remarks For transports and stores that end a message outside a loop's failure path, so their
 * letters match the loop's own. It adds none of the optional fields (`idempotencyKey`, `checkpoint`,
 * `headers`): the caller knows them.
 *
 * @param m - the message
 * @param error - its last failure (core's `ErrorInfo`)
 * @param attempts - its attempts, oldest first
 * @param clock - the clock that stamps it
 * @param at - the reading of `clock` to stamp, if the caller has one
 *
 * @group Failure handling
 * @category Dead letters
 */
export function deadLetterOf(
  m: DeadLetterSubject,
  error: ErrorInfo,
  attempts: readonly AttemptRecord[],
  clock: Clock,
  at: number = clock.now(),
): DeadLetter {
  return {
    id: m.id,
    type: m.type,
    payload: m.payload,
    key: m.key,
    priority: m.priority,
    routeKey: m.routeKey,
    traceId: m.traceId,
    reason: error.errorClass === 'non-retryable' ? 'non-retryable' : 'exhausted',
    errorClass: error.errorClass,
    error,
    attempts: [...attempts],
    at,
    atEpochMs: wallNow(clock),
  }
}
