/**
 * `loop.restore(snapshot)`: re-admitting a shutdown snapshot, all or nothing — read it once into a
 * plain copy and validate that, check the loop can take it (choosing each route key, the only user
 * code before the end), let the ledger claim every key (undoing them if the store fails), then place
 * every message, and only then tell listeners (one of them may stop the loop).
 *
 * @module
 */

import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { Message, MessageMap, PostOptions } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { LoopSnapshot, SnapshotMessage } from '../contracts/snapshot.js'
import type { Registry } from '../dispatcher/registry.js'
import { SnapshotError } from '../errors.js'
import type { Retries } from '../failure/retries.js'
import { NO_HEADERS } from '../headers.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import { isWaiting } from '../jobs/keyed-jobs.js'
import { Journal } from '../journal/journal.js'
import type { RecordParts } from '../journal/records.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { RunQueue } from '../queue/run-queue.js'
import { checkFits, checkSnapshot } from '../shutdown/snapshot.js'
import type { DelayedPosts } from '../timers/delayed-posts.js'
import type { Admission } from './admission.js'

/** Where a restore reads its policy: the loop's room, the types' routers. */
export interface RestorePolicyPorts<M extends MessageMap> {
  readonly options: Pick<ResolvedLoopOptions, 'capacity' | 'maxDelayed'>
  readonly registry: Pick<Registry<M>, 'resolve'>
}

/** Where restored messages go: by their state, to the queue, the delayed posts or the retries. */
export interface RestorePlacePorts<M extends MessageMap> {
  readonly queue: Pick<RunQueue, 'length'>
  readonly delayed: Pick<DelayedPosts, 'length' | 'schedule'>
  readonly retries: Pick<Retries, 'restored'>
  /** Stamps a restored message and queues it. */
  readonly admission: Pick<Admission<M>, 'stamp' | 'insert'>
  readonly journal: Pick<Journal<M>, 'admitted' | 'guard'> | undefined
  /** Cancels a waiting message (one a restored message replaces by its job key). */
  cancel(m: Envelope, why: string): unknown
}

/** The stages a restore touches. */
export interface RestoreParts<M extends MessageMap> {
  readonly policy: RestorePolicyPorts<M>
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly metrics: LoopMetrics
  /** The per-post side tables: extras, traces, the idempotency ledger. */
  readonly records: RecordParts
  readonly places: RestorePlacePorts<M>
  /** One more post arrived (the ways in count `posted`). */
  arrived(): void
}

/**
 * Re-admits every message of `snapshot` (see `Loop.restore`).
 * @param elapsedMs - time since it was taken, when the snapshot's waits are not counted from `takenAt`
 * @param extraRoom - places beyond the capacity it may take (a journal's interrupted messages)
 * @param admitted - collects the re-admitted messages, in snapshot order, when given
 * @returns how many were re-admitted (messages whose key is done since are skipped)
 * @throws SnapshotError, and nothing changed
 */
export function restoreSnapshot<M extends MessageMap>(
  host: RestoreParts<M>,
  snapshot: LoopSnapshot,
  elapsedMs?: number,
  extraRoom = 0,
  admitted?: Message<M>[],
): number {
  const all = checkSnapshot(snapshot) // a plain copy, read once
  // A schedule this loop holds already keeps its own next fire: the snapshot's is skipped.
  const held = (sm: SnapshotMessage) => sm.schedule !== undefined && host.records.extras.scheduleCarrier(sm.schedule.id)
  const s = { ...all, messages: all.messages.filter((sm) => !held(sm)) }
  host.metrics.duplicates += all.messages.length - s.messages.length
  const routeKeys = checkFits(s, {
    resolve: (sm) => host.policy.registry.resolve(sm.type)?.select(sm as unknown as Message<MessageMap, never>),
    holds: (key) => host.records.ledger.current?.holds(key) === true,
    freeQueue: host.policy.options.capacity - host.places.queue.length + extraRoom,
    freeDelayed: host.policy.options.maxDelayed - host.places.delayed.length,
  })
  const payloads = host.places.journal === undefined ? undefined : payloadsOf(s)
  const admit = claimKeys(host, s)
  const now = host.clock.now()
  const elapsed = elapsedMs ?? Math.max(0, wallNow(host.clock) - s.takenAt)
  const announce: (() => void)[] = []
  for (const [i, sm] of s.messages.entries()) {
    if (admit[i] === true) announce.push(readmit(host, sm, routeKeys[i], now, elapsed, payloads?.[i], admitted))
    else host.metrics.duplicates++
  }
  for (const emit of announce) emit() // everything is in place before any listener runs
  host.events.emit('restored', announce.length, s.messages.length - announce.length)
  return announce.length
}

// A loop with a journal keeps payloads as JSON: one JSON cannot represent fails the restore whole.
function payloadsOf(s: LoopSnapshot): (string | undefined)[] {
  return s.messages.map((sm, i) => {
    try {
      return Journal.json('payload', sm.payload)
    } catch (error) {
      throw new SnapshotError(`messages[${i}].payload`, (error as Error).message, { cause: error })
    }
  })
}

// The ledger's say on each restored key, all before anything is admitted: a store that fails undoes
// the keys taken so far, and the restore fails whole.
function claimKeys<M extends MessageMap>(host: RestoreParts<M>, s: LoopSnapshot): boolean[] {
  const taken: string[] = []
  const admit = s.messages.map((sm, i) => {
    const key = sm.idempotencyKey
    if (key === undefined) return true
    const ledger = host.records.ledger.ensure()
    try {
      const ok = ledger.restore(key, sm.checkpoint)
      if (ok) taken.push(key)
      return ok
    } catch (error) {
      for (const k of taken) ledger.unrestore(k)
      throw new SnapshotError(
        `messages[${i}].idempotencyKey`,
        `the idempotency store failed: ${(error as Error).message}`,
        { cause: error },
      )
    }
  })
  host.records.ledger.current?.restored()
  return admit
}

// Re-admits one message (checked, its key claimed, its route key chosen: no user code runs here);
// returns the emission of its event.
function readmit<M extends MessageMap>(
  host: RestoreParts<M>,
  sm: SnapshotMessage,
  routeKey: string | undefined,
  now: number,
  elapsed: number,
  payloadJson: string | undefined,
  admitted: Message<M>[] | undefined,
): () => void {
  const { metrics } = host
  const { admission, journal } = host.places
  const { extras, traces } = host.records
  const options: PostOptions = { key: sm.key, priority: sm.priority }
  const origin = { trace: sm.traceId, hops: sm.hops, headers: sm.headers ?? NO_HEADERS }
  const m: Envelope = admission.stamp(sm.type, sm.payload, options, origin, routeKey)
  const { handlerTimeoutMs, retry, idempotencyKey, group } = sm
  extras.keep(m, { handlerTimeoutMs, retry, idempotencyKey, group })
  if (sm.checkpoint !== undefined) extras.commit(m, sm.checkpoint)
  const displaced = sm.job === undefined ? undefined : extras.jobNamed(sm.job.key)
  if (sm.job !== undefined) extras.bindJob(m, sm.job)
  if (sm.schedule !== undefined) extras.bindSchedule(m, sm.schedule)
  // A loop, not push(...): a long attempt history would throw RangeError half-way through the restore.
  if (sm.attempts.length > 0) for (const a of sm.attempts) traces.open(m).addAttempt(a)
  host.arrived()
  metrics.accepted++
  metrics.restored++
  journal?.admitted(m, payloadJson)
  journal?.guard.restored(m, sm.crashes)
  admitted?.push(m as unknown as Message<M>)
  const announce = place(host, m, sm, now, elapsed)
  // A job key that named a waiting message here names the restored one now: the other is replaced.
  if (displaced === undefined || !isWaiting(displaced)) return announce
  return () => {
    host.places.cancel(displaced, `replaced by a restored message with job key ${sm.job?.key}`)
    announce()
  }
}

// Puts a restored message where its state says; returns the emission of its event.
function place<M extends MessageMap>(
  host: RestoreParts<M>,
  m: Envelope,
  sm: SnapshotMessage,
  now: number,
  elapsed: number,
) {
  const { events } = host
  const { admission, retries } = host.places
  const dueAt = now + Math.max(0, (sm.dueInMs ?? 0) - elapsed)
  const message = m as unknown as Message<M>
  if (sm.state === 'delayed') {
    host.places.delayed.schedule(m, dueAt)
    return () => events.emit('scheduled', message, dueAt)
  }
  if (sm.state === 'retry-scheduled') {
    retries.restored(m, dueAt)
    return () => events.emit('retrying', message, { attempt: sm.attempts.length + 1, delayMs: dueAt - now, dueAt })
  }
  admission.insert(m, sm.attempts.length > 0 || sm.checkpoint !== undefined)
  return () => events.emit('posted', message)
}
