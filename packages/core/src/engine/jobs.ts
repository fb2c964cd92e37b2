/**
 * Keyed jobs and recurring schedules, built from the stages they post through. Nothing here runs
 * per message.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'
import { type KeyedJobParts, KeyedJobs } from '../jobs/keyed-jobs.js'
import { type ScheduleParts, Schedules } from '../jobs/schedules.js'

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

/** Recurring schedules; `journal`: posts wait for `start()` until it recovered. */
export function newSchedules(
  roots: JobRoots,
  registry: ScheduleParts['registry'],
  journal: { readonly recovered: boolean } | undefined,
): Schedules {
  const { clock, extras, cancel } = roots
  const admission = roots.admission as ScheduleParts['admission']
  const awaitingRecovery = () => journal !== undefined && !journal.recovered
  return new Schedules({ clock, extras, registry, admission, awaitingRecovery, cancel })
}
