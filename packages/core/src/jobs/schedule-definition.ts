/**
 * A schedule's definition — id, spec, type, payload, the options of its fires — checked as a whole
 * before anything is registered, and compared, so an upsert that changes nothing fires nothing twice.
 *
 * @module
 */
import type { PostOptions } from '../contracts/message.js'
import type { ScheduleOptions, ScheduleState } from '../contracts/schedules.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'
import { checkSpec, type Timing } from './schedule-spec.js'

const OPTION_KEYS = ['key', 'priority', 'handlerTimeoutMs', 'retry', 'headers', 'group']

/** @internal A checked schedule (for transports: `@flowing/nats`). */
export interface Definition {
  readonly id: string
  readonly type: string
  readonly payload: unknown
  readonly spec: Timing
  readonly options: ScheduleOptions
  /** An `every` schedule's first fire (its `startAt`, or one interval after registration). */
  readonly anchor: number | undefined
  /** Paused before `start()` recovered the journal. */
  readonly paused?: boolean
}

/**
 * @internal Checks a schedule and returns its definition (for transports: `@flowing/nats`).
 * @param nowEpochMs - registration time (an `every` without `startAt` first fires one interval later)
 * @param anchor - a recovered schedule's anchor
 * @throws InvalidArgumentError naming the first bad value
 */
export function defineSchedule(
  id: unknown,
  spec: unknown,
  type: unknown,
  payload: unknown,
  options: unknown,
  nowEpochMs: number,
  anchor?: number,
  checked?: Timing,
): Definition {
  if (!(typeof id === 'string' && id.length > 0 && id.length <= 256))
    throw new InvalidArgumentError('id', 'a non-empty string of at most 256 characters', id)
  if (!(typeof type === 'string' && type.length > 0)) throw new InvalidArgumentError('type', 'a message type', type)
  const timing = checked ?? checkSpec(spec)
  checkJson(payload)
  const o = (checkScheduleOptions(options) ?? {}) as ScheduleOptions
  const every = timing.spec.every
  const first = every === undefined ? undefined : (anchor ?? timing.spec.startAt ?? nowEpochMs + every)
  return { id, type, payload, spec: timing, options: o, anchor: first }
}

/**
 * Checks a schedule's state as a snapshot or a journal carries it.
 * @throws InvalidArgumentError naming the first bad field
 */
export function checkScheduleState(value: unknown, type: unknown): void {
  const s = check.plainObject('schedule', value) as unknown as ScheduleState
  check.knownKeys('schedule', s as unknown as Record<string, unknown>, STATE_KEYS)
  const time = (name: string, v: unknown) => {
    if (!(typeof v === 'number' && Number.isFinite(v))) throw new InvalidArgumentError(name, 'a time in ms', v)
  }
  time('schedule.nominalEpochMs', s.nominalEpochMs)
  if (s.anchorEpochMs !== undefined) time('schedule.anchorEpochMs', s.anchorEpochMs)
  check.nonNegativeInteger('schedule.runs', s.runs)
  if (s.paused !== undefined) check.boolean('schedule.paused', s.paused)
  defineSchedule(s.id, s.spec, type, undefined, s.options, s.nominalEpochMs, s.anchorEpochMs)
}

const STATE_KEYS = ['id', 'spec', 'options', 'anchorEpochMs', 'runs', 'nominalEpochMs', 'paused']

/**
 * Checks the option names of a schedule's fires (their values are checked as a post's).
 * @returns them as post options
 */
export function checkScheduleOptions(options: unknown): PostOptions | undefined {
  if (options === undefined) return undefined
  const o = check.plainObject('options', options)
  check.knownKeys('options', o, OPTION_KEYS)
  return o as PostOptions
}

/** @internal Whether two definitions make the same fires (an `every`'s anchor aside: the first one's stays). */
export function sameDefinition(a: Definition, b: Definition): boolean {
  return (
    a.id === b.id &&
    a.type === b.type &&
    JSON.stringify(a.payload) === JSON.stringify(b.payload) &&
    JSON.stringify(a.spec.spec) === JSON.stringify(b.spec.spec) &&
    JSON.stringify(a.options) === JSON.stringify(b.options)
  )
}

// A schedule lives in snapshots and journals: its payload must be JSON.
function checkJson(payload: unknown): void {
  try {
    JSON.stringify(payload)
    return
  } catch (error) {
    const rule = 'a JSON-serializable payload (a schedule is kept as JSON)'
    throw new InvalidArgumentError('payload', rule, payload, { cause: error })
  }
}
