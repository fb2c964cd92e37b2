/**
 * Shutdown snapshots: every message a stopping loop did not finish, as plain JSON-serializable data
 * with a format name and a version, and their validation on restore (all or nothing).
 *
 * @module
 */

import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { AttemptRecord } from '../contracts/failures.js'
import type { JobState } from '../contracts/jobs.js'
import { MAX_PRIORITY } from '../contracts/priority.js'
import {
  type LoopSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type SnapshotMessage,
  type SnapshotState,
} from '../contracts/snapshot.js'
import { describeValue, SnapshotError } from '../errors.js'
import { checkRetryOptions } from '../failure/retry-policy.js'
import { checkHeaders } from '../headers.js'
import { checkScheduleState } from '../jobs/schedule-definition.js'
import { readSnapshot } from './snapshot-read.js'

const STATES: readonly SnapshotState[] = ['queued', 'held', 'running', 'delayed', 'retry-scheduled']
const KEYS = new Set([
  'id',
  'type',
  'payload',
  'key',
  'priority',
  'traceId',
  'hops',
  'state',
  'dueInMs',
  'attempts',
  'idempotencyKey',
  'checkpoint',
  'retry',
  'handlerTimeoutMs',
  'group',
  'headers',
  'job',
  'schedule',
  'crashes',
])

/**
 * The one way a snapshot is made — a stop's, a journal's recovered rows, one re-admitted message —
 * stamped with the wall time of the loop's clock (`wallNow`), so a `VirtualClock` governs snapshot
 * ages as it governs every other time.
 */
export function newSnapshot(clock: Clock, messages: SnapshotMessage[], drained: boolean): LoopSnapshot {
  return { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, takenAt: wallNow(clock), drained, messages }
}
/**
 * Checks that `value` is a whole snapshot of this format and version, field by field, and returns a
 * plain copy of it (payloads and checkpoints as given): every field is read once, so a getter or a
 * `Proxy` cannot answer one thing to the check and another to the restore.
 * @throws SnapshotError naming the first bad field, or the first whose reading threw (its `cause`)
 *
 * @group Shutdown
 */
export function checkSnapshot(value: unknown): LoopSnapshot {
  const copy = readSnapshot(value)
  const s = record<LoopSnapshot>('', copy)
  if (s.format !== SNAPSHOT_FORMAT) fail('format', `must be ${JSON.stringify(SNAPSHOT_FORMAT)}, got ${show(s.format)}`)
  if (s.version !== SNAPSHOT_VERSION) {
    fail(
      'version',
      `must be ${SNAPSHOT_VERSION} (this release reads version ${SNAPSHOT_VERSION}), got ${show(s.version)}`,
    )
  }
  if (typeof s.takenAt !== 'number' || !Number.isFinite(s.takenAt))
    fail('takenAt', `must be a time in ms, got ${show(s.takenAt)}`)
  if (typeof s.drained !== 'boolean') fail('drained', `must be a boolean, got ${show(s.drained)}`)
  if (!Array.isArray(s.messages)) fail('messages', `must be an array, got ${show(s.messages)}`)
  const ids = new Set<string>()
  ;(s.messages as unknown[]).forEach((m, i) => {
    checkMessage(`messages[${i}]`, m)
    const id = (m as SnapshotMessage).id
    if (ids.has(id)) fail(`messages[${i}].id`, `repeats ${JSON.stringify(id)} (a snapshot lists each message once)`)
    ids.add(id)
  })
  return copy as LoopSnapshot
}

function checkMessage(path: string, value: unknown): void {
  const m = record<SnapshotMessage>(path, value)
  for (const key of Object.keys(m)) if (!KEYS.has(key)) fail(`${path}.${key}`, 'is not a snapshot field')
  for (const field of ['id', 'type', 'traceId'] as const) {
    if (typeof m[field] !== 'string' || m[field] === '')
      fail(`${path}.${field}`, `must be a non-empty string, got ${show(m[field])}`)
  }
  // `payload` may be absent: JSON drops an `undefined` payload.
  const key = m.key
  if (key !== undefined && typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) {
    fail(`${path}.key`, `must be a string or a finite number, got ${show(key)}`)
  }
  const p = m.priority
  if (!(typeof p === 'number' && Number.isInteger(p) && p >= 0 && p <= MAX_PRIORITY)) {
    fail(`${path}.priority`, `must be an integer from 0 to ${MAX_PRIORITY}, got ${show(p)}`)
  }
  if (!(typeof m.hops === 'number' && Number.isInteger(m.hops) && m.hops >= 0))
    fail(`${path}.hops`, `must be a non-negative integer, got ${show(m.hops)}`)
  if (!STATES.includes(m.state as SnapshotState))
    fail(`${path}.state`, `must be one of ${STATES.join(', ')}, got ${show(m.state)}`)
  const timed = m.state === 'delayed' || m.state === 'retry-scheduled'
  if (timed && !(typeof m.dueInMs === 'number' && m.dueInMs >= 0 && Number.isFinite(m.dueInMs))) {
    fail(`${path}.dueInMs`, `must be a non-negative number of ms for a ${m.state} message, got ${show(m.dueInMs)}`)
  }
  if (!timed && m.dueInMs !== undefined) fail(`${path}.dueInMs`, `must be absent for a ${m.state} message`)
  if (!Array.isArray(m.attempts)) fail(`${path}.attempts`, `must be an array, got ${show(m.attempts)}`)
  for (const [i, a] of (m.attempts as unknown[]).entries()) checkAttempt(`${path}.attempts[${i}]`, a, i + 1)
  if (m.idempotencyKey !== undefined && (typeof m.idempotencyKey !== 'string' || m.idempotencyKey === '')) {
    fail(`${path}.idempotencyKey`, `must be a non-empty string, got ${show(m.idempotencyKey)}`)
  }
  if (m.retry !== undefined) {
    try {
      checkRetryOptions(`${path}.retry`, m.retry)
    } catch (error) {
      fail(`${path}.retry`, (error as Error).message, error)
    }
  }
  checkPolicies(path, m)
  if (m.headers !== undefined) {
    try {
      checkHeaders(`${path}.headers`, m.headers)
    } catch (error) {
      fail(`${path}.headers`, (error as Error).message, error)
    }
  }
}

// The per-post deadline, key group, job key and crash count.
function checkPolicies(path: string, m: Fields<SnapshotMessage>): void {
  const c = m.crashes
  if (c !== undefined && !(typeof c === 'number' && Number.isInteger(c) && c >= 0))
    fail(`${path}.crashes`, `must be a non-negative integer, got ${show(c)}`)
  const t = m.handlerTimeoutMs
  if (t !== undefined && !(typeof t === 'number' && t > 0))
    fail(`${path}.handlerTimeoutMs`, `must be a positive number, got ${show(t)}`)
  const group = m.group
  if (group !== undefined && !(typeof group === 'string' && group.length > 0 && group.length <= 256))
    fail(`${path}.group`, `must be a non-empty string of at most 256 characters, got ${show(group)}`)
  if (m.job !== undefined) checkJob(`${path}.job`, m.job)
  if (m.schedule !== undefined) {
    try {
      checkScheduleState(m.schedule, m.type)
    } catch (error) {
      fail(`${path}.schedule`, (error as Error).message, error)
    }
  }
}

function checkJob(path: string, value: unknown): void {
  const j = record<JobState>(path, value)
  for (const key of Object.keys(j))
    if (key !== 'key' && key !== 'untilEpochMs') fail(`${path}.${key}`, 'is not a job field')
  if (!(typeof j.key === 'string' && j.key.length > 0 && j.key.length <= 512))
    fail(`${path}.key`, `must be a non-empty string of at most 512 characters, got ${show(j.key)}`)
  const until = j.untilEpochMs
  if (until !== undefined && !(typeof until === 'number' && Number.isFinite(until)))
    fail(`${path}.untilEpochMs`, `must be a time in ms, got ${show(until)}`)
}

function checkAttempt(path: string, value: unknown, expected: number): void {
  const a = record<AttemptRecord>(path, value)
  if (a.attempt !== expected)
    fail(`${path}.attempt`, `must be ${expected} (attempts are numbered in order), got ${show(a.attempt)}`)
  for (const field of ['startedAt', 'durationMs'] as const) {
    if (typeof a[field] !== 'number' || !Number.isFinite(a[field]))
      fail(`${path}.${field}`, `must be a number, got ${show(a[field])}`)
  }
  const wall = a.startedAtEpochMs
  if (wall !== undefined && !(typeof wall === 'number' && Number.isFinite(wall)))
    fail(`${path}.startedAtEpochMs`, `must be a number, got ${show(wall)}`)
  if (!['succeeded', 'failed', 'timed-out'].includes(a.outcome as string)) {
    fail(`${path}.outcome`, `must be succeeded, failed or timed-out, got ${show(a.outcome)}`)
  }
}

type Fields<T> = { readonly [K in keyof T]?: unknown }

function record<T>(path: string, value: unknown): Fields<T> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail(path, `must be an object, got ${show(value)}`)
  }
  return value as Fields<T>
}

function fail(path: string, problem: string, cause?: unknown): never {
  throw new SnapshotError(path, problem, cause === undefined ? undefined : { cause })
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing'
  try {
    const json = JSON.stringify(value)
    return json === undefined ? describeValue(value) : json.length > 60 ? `${json.slice(0, 57)}…` : json
  } catch {
    return describeValue(value) // a cycle, a BigInt, a throwing toJSON or getter: the total formatter
  }
}

/** What a loop can take, for {@link checkFits}. */
export interface RestoreRoom {
  /** The route key of `message` (undefined: its type has no router); throws when the loop cannot dispatch it. */
  resolve(message: SnapshotMessage): string | undefined
  /** Whether a message in flight in the loop holds `idempotencyKey`. */
  holds(idempotencyKey: string): boolean
  /** Free places in the queue. */
  readonly freeQueue: number
  /** Free places for delayed and retrying messages. */
  readonly freeDelayed: number
}

/**
 * Checks that a loop can take every message of a (valid) snapshot: known types and routes, keys not
 * already in flight there, room in the queue and for delayed messages.
 * @returns each message's route key (undefined without a router), chosen once here
 * @throws SnapshotError naming the first problem
 */
export function checkFits(s: LoopSnapshot, room: RestoreRoom): (string | undefined)[] {
  let waiting = 0
  let timed = 0
  const routeKeys: (string | undefined)[] = []
  for (const [i, sm] of s.messages.entries()) {
    try {
      routeKeys.push(room.resolve(sm))
    } catch (error) {
      fail(`messages[${i}].type`, (error as Error).message, error)
    }
    if (sm.idempotencyKey !== undefined && room.holds(sm.idempotencyKey)) {
      fail(
        `messages[${i}].idempotencyKey`,
        `${JSON.stringify(sm.idempotencyKey)} is in flight in this loop (was the snapshot restored twice?)`,
      )
    }
    if (sm.state === 'delayed') timed++
    else waiting++ // a retry keeps its place in the queue while it backs off
  }
  if (waiting > room.freeQueue)
    fail('messages', `needs ${waiting} free places in the queue, ${room.freeQueue} are free`)
  if (timed > room.freeDelayed) {
    fail('messages', `holds ${timed} delayed messages, maxDelayed leaves room for ${room.freeDelayed}`)
  }
  return routeKeys
}
