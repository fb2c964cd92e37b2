/**
 * A schedule's spec: validated once (typed errors naming the value and the rule), then asked for its
 * fire times. Cron expressions are croner's — parsed, matched and carried across DST by it, in the
 * spec's IANA zone — and fixed intervals are arithmetic.
 *
 * @module
 */
import { Cron } from 'croner'
import type { MissedFires, ScheduleSpec } from '../contracts/schedules.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const SPEC_KEYS = ['cron', 'every', 'tz', 'startAt', 'endAt', 'limit', 'jitterMs', 'missed']

/** A checked spec: its times as epoch ms. */
export type NormalSpec = Omit<ScheduleSpec, 'startAt' | 'endAt'> & {
  readonly startAt?: number
  readonly endAt?: number
}

/** A checked spec and its cron (if any) compiled. */
export interface Timing {
  readonly spec: NormalSpec
  readonly cron: Cron | undefined
}

/**
 * Checks `spec` and returns it normalized (dates as epoch ms, `tz` only with `cron`).
 * @throws InvalidArgumentError naming the first bad field
 */
export function checkSpec(spec: unknown): Timing {
  const s = check.plainObject('spec', spec) as ScheduleSpec
  check.knownKeys('spec', s as Record<string, unknown>, SPEC_KEYS)
  if ((s.cron === undefined) === (s.every === undefined)) {
    throw new InvalidArgumentError('spec', 'one of `cron` and `every` (exactly one)', spec)
  }
  const out: Mutable<NormalSpec> = {}
  let cron: Cron | undefined
  if (s.cron !== undefined) {
    out.tz = checkZone(s.tz)
    if (typeof s.cron !== 'string') throw new InvalidArgumentError('spec.cron', 'a cron expression (a string)', s.cron)
    out.cron = s.cron
    cron = compile(s.cron, out.tz)
  } else {
    if (s.tz !== undefined)
      throw new InvalidArgumentError('spec.tz', 'absent with `every` (a time zone reads cron)', s.tz)
    if (!(typeof s.every === 'number' && s.every >= 1 && s.every <= MAX_TIME))
      throw new InvalidArgumentError('spec.every', 'a number of ms from 1 to 8.64e15', s.every)
    out.every = s.every
  }
  checkWindow(s, out)
  return { spec: out, cron }
}

// startAt, endAt, limit, jitterMs, missed.
function checkWindow(s: ScheduleSpec, out: Mutable<NormalSpec>): void {
  if (s.startAt !== undefined) out.startAt = epochOf('spec.startAt', s.startAt)
  if (s.endAt !== undefined) out.endAt = epochOf('spec.endAt', s.endAt)
  if (out.startAt !== undefined && out.endAt !== undefined && out.endAt <= out.startAt) {
    throw new InvalidArgumentError(
      'spec.endAt',
      `a time after spec.startAt (${new Date(out.startAt).toISOString()})`,
      s.endAt,
    )
  }
  if (s.limit !== undefined) out.limit = check.positiveInteger('spec.limit', s.limit, Number.MAX_SAFE_INTEGER)
  if (s.jitterMs !== undefined) out.jitterMs = check.nonNegativeNumber('spec.jitterMs', s.jitterMs, false)
  if (s.missed !== undefined) out.missed = checkMissed(s.missed)
}

function checkMissed(missed: unknown): MissedFires {
  if (missed === 'skip' || missed === 'run-once') return missed
  const rule = "'skip', 'run-once' or { backfill: n } (n an integer from 1 to 10000)"
  if (missed === null || typeof missed !== 'object' || Object.keys(missed).join() !== 'backfill')
    throw new InvalidArgumentError('spec.missed', rule, missed)
  const n = (missed as { backfill: unknown }).backfill
  if (!(typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 10_000))
    throw new InvalidArgumentError('spec.missed', rule, missed)
  return { backfill: n }
}

// Zones checked already: an `Intl.DateTimeFormat` costs ~70 µs to build.
const ZONES = new Set<string>(['UTC'])

// A time zone the runtime knows (Intl refuses an unknown IANA name with a RangeError).
function checkZone(tz: unknown): string {
  if (tz === undefined) return 'UTC'
  if (typeof tz === 'string' && ZONES.has(tz)) return tz
  if (typeof tz === 'string' && tz.length > 0) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz })
      if (ZONES.size < 1_024) ZONES.add(tz)
      return tz
    } catch {}
  }
  throw new InvalidArgumentError('spec.tz', 'an IANA time zone name such as Europe/Berlin', tz)
}

// Compiled expressions by zone and text, shared by every schedule that uses one: a croner `Cron` holds
// about 80 KB (its year field is an array of 10,000), so 100,000 schedules must not each have their own.
// Only `nextRun` and `previousRuns` are called on them: pure reads. Emptied when it reaches its bound.
const COMPILED = new Map<string, Cron>()
const MAX_COMPILED = 4_096

function compile(expression: string, tz: string): Cron {
  const id = `${tz}\n${expression}`
  const known = COMPILED.get(id)
  if (known !== undefined) return known
  try {
    if (COMPILED.size >= MAX_COMPILED) COMPILED.clear()
    const cron = new Cron(expression, { timezone: tz, paused: true })
    COMPILED.set(id, cron)
    return cron
  } catch (error) {
    const rule = 'a cron expression: 5 or 6 fields, or a nickname such as @daily'
    throw new InvalidArgumentError('spec.cron', rule, expression, { cause: error, hint: (error as Error).message })
  }
}

// The range a `Date` can hold: ±100,000,000 days from the epoch.
const MAX_TIME = 8.64e15

function epochOf(name: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : value
  if (typeof ms === 'number' && Math.abs(ms) <= MAX_TIME) return ms
  throw new InvalidArgumentError(name, 'a time: ms since the Unix epoch, or a valid Date', value)
}

/**
 * @internal The first fire strictly after `afterEpochMs` (and at or after `startAt`, before `endAt`), or
 * undefined when the schedule has no more.
 * @param anchor - an `every` schedule's first fire (its `startAt`, or one interval after registration)
 */
export function nextFire(t: Timing, anchor: number | undefined, afterEpochMs: number): number | undefined {
  const { spec, cron } = t
  let next: number | undefined
  if (cron !== undefined) {
    const from = spec.startAt !== undefined && spec.startAt > afterEpochMs ? spec.startAt - 1 : afterEpochMs
    next = cron.nextRun(new Date(from))?.getTime()
  } else {
    const every = spec.every as number
    const first = anchor as number
    next = afterEpochMs < first ? first : first + (Math.floor((afterEpochMs - first) / every) + 1) * every
  }
  return next === undefined || (spec.endAt !== undefined && next >= spec.endAt) ? undefined : next
}

/**
 * @internal The fire times in [`fromEpochMs`, `toEpochMs`] (both inclusive), the `n` most recent of them, oldest
 * first: the fires a restart missed.
 */
export function missedFires(
  t: Timing,
  anchor: number | undefined,
  fromEpochMs: number,
  toEpochMs: number,
  n: number,
): number[] {
  const { spec, cron } = t
  let times: number[]
  if (cron !== undefined) {
    times = cron
      .previousRuns(n, new Date(toEpochMs + 1))
      .map((d) => d.getTime())
      .reverse()
  } else {
    const every = spec.every as number
    const last = Math.floor((toEpochMs - (anchor as number)) / every)
    times = []
    for (let k = Math.max(0, last - n + 1); k <= last; k++) times.push((anchor as number) + k * every)
  }
  const start = Math.max(fromEpochMs, spec.startAt ?? fromEpochMs)
  return times.filter((x) => x >= start && x <= toEpochMs && (spec.endAt === undefined || x < spec.endAt))
}
