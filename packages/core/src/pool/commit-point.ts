/**
 * `ctx.commit(checkpoint)`: a handler's commit point — journaled (with a store), kept for a retry or a
 * restore to resume after, given to the idempotency ledger, noted in the trace. Only the attempt running
 * now may commit.
 *
 * @module
 */
import { FencedError } from '@flowing/watchdog'
import type { Message, MessageMap } from '../contracts/message.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { Journal } from '../journal/journal.js'
import type { AttemptEndPorts, AttemptParts } from './attempt-ports.js'

/** One commit point of `m`'s attempt `attempt`, begun at `startedAt` (clock time). */
export interface CommitPoint {
  readonly m: Envelope
  readonly checkpoint: unknown
  readonly attempt: number
  readonly startedAt: number
}

/**
 * Records a commit point.
 * @throws FencedError when the attempt no longer runs; InvalidArgumentError (with a store) for a
 *   checkpoint JSON cannot keep — nothing is recorded then
 */
export function commitPoint<M extends MessageMap>(
  p: AttemptParts<M>,
  ends: Pick<AttemptEndPorts<M>, 'failures' | 'journal'>,
  { m, checkpoint, attempt, startedAt }: CommitPoint,
): void {
  const { clock, events } = p
  const { extras, ledger, traces } = p.records
  if (m.where !== Where.Running || attempt !== ends.failures.attemptOf(m)) {
    throw new FencedError(`${m.type} ${m.id}`, attempt, 'not running', 'ctx.commit')
  }
  const journal = ends.journal
  if (journal !== undefined) {
    journal.committed(m, Journal.json('checkpoint', checkpoint)) // throws InvalidArgumentError: JSON cannot keep it
  }
  extras.commit(m, checkpoint)
  const value = extras.checkpointOf(m)
  ledger.current?.committed(m, value)
  traces.openAt(m, startedAt, attempt).note('committed', clock.now(), attempt)
  events.emit('committed', m as unknown as Message<M>, value)
}
