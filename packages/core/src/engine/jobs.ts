/**
 * Keyed jobs and recurring schedules, built from the stages they post through. Nothing here runs
 * per message.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { MessageMap, PostOptions } from '../contracts/message.js'
import { InvalidArgumentError, isFlowingError, LoopStoppedError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'
import { type KeyedJobParts, KeyedJobs } from '../jobs/keyed-jobs.js'
import { type ScheduleParts, Schedules } from '../jobs/schedules.js'
import type { DelayedMessage } from '../timers/delayed-posts.js'

/** What keyed jobs and schedules are built from. */
export interface JobRoots {
  readonly clock: Clock
  readonly extras: PostExtras
  /** Admission's `schedule` and `post` (a schedule's next fire is posted while a stop drains too). */
  readonly admission: object
  /** Cancels a waiting message (a loop-back: cancels are built later). */
  readonly cancel: (m: Envelope, why: string) => unknown
}

/** Posts with a job key. */
export function newKeyedJobs<M extends MessageMap>(roots: JobRoots, waits: KeyedJobParts<M>['waits']): KeyedJobs<M> {
  const { clock, extras, cancel } = roots
  const admission = roots.admission as KeyedJobParts<M>['admission']
  return new KeyedJobs<M>({ clock, extras, admission, waits, cancel })
}

/** Recurring schedules. */
export function newSchedules(roots: JobRoots, more: ScheduleRoots): Schedules {
  const { clock, extras, cancel } = roots
  const { registry, journal, lingering, lifecycle, events } = more
  const refuseIfStopping = (action: string) => {
    const { state } = lifecycle
    if (state === 'draining' || state === 'stopped') throw new LoopStoppedError(action, state)
  }
  // Through the ways in (built later, read at each call): a fire counts as posted.
  const admission: ScheduleParts['admission'] = {
    schedule: (type, payload, dueAt, o, internal) =>
      more.entries.scheduleFire(type, payload, dueAt, o, internal) as DelayedMessage,
  }
  const awaitingRecovery = () => journal !== undefined && !journal.recovered
  // A retried next fire: given up once the loop stopped.
  const later = (retry: () => void) => void lingering.setTimeout(() => lifecycle.state !== 'stopped' && retry(), 1_000)
  const refused = (id: string, error: unknown) => events.emit('schedule-refused', id, error)
  const hooks = { awaitingRecovery, refuseIfStopping, refused, later }
  const types = { resolve: (type: string) => registry.resolve(type), checkPayload: checkPayloadOf(registry) }
  return new Schedules({ clock, extras, registry: types, admission, cancel, hooks })
}

// A schedule's payload, by its type's `checkPayload` (as a post's: a typed refusal).
function checkPayloadOf(registry: ScheduleRoots['registry']) {
  return (type: string, payload: unknown): void => {
    const check = registry.payloadCheckFor(type)
    try {
      check?.(payload)
    } catch (error) {
      if (isFlowingError(error)) throw error
      const rule = `a payload the \`checkPayload\` of \`${type}\` accepts`
      throw new InvalidArgumentError('payload', rule, payload, { cause: error })
    }
  }
}

/** What schedules need beyond the job roots. */
export interface ScheduleRoots {
  readonly registry: {
    resolve(type: string): unknown
    payloadCheckFor(type: string): ((p: unknown) => void) | undefined
  }
  /** The journal, if any: posts wait for `start()` until it recovered. */
  readonly journal: { readonly recovered: boolean } | undefined
  /** The clock of a retried next fire (it does not keep a stopped loop's process alive). */
  readonly lingering: Clock
  /** Upserts, removals, pauses and resumes are refused once a stop began. */
  readonly lifecycle: { readonly state: string }
  readonly events: { emit(event: 'schedule-refused', id: string, error: unknown): unknown }
  /** The ways in (a schedule's fires count as posted there). */
  readonly entries: {
    scheduleFire(type: string, payload: unknown, dueAt: number, o: PostOptions, internal: boolean): { message: unknown }
  }
}
