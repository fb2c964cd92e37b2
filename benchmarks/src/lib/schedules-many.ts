/**
 * Many recurring schedules in one loop: the time to register them, the heap each holds,
 * `loop.schedules.list()` over all of them, and the cost of a fire — each beside plain delayed
 * messages, the baseline. Loops run on a `VirtualClock` (wall time 2026-01-01T00:00Z at virtual 0).
 *
 * @module
 */
import { createLoop, type Loop, VirtualClock } from '@flowing/core'
import { expectEqual } from './check.js'
import { collect, heapUsed } from './gc.js'
import { idleLoop, type TimeoutMessages } from './schedules-ops.js'

/** What is registered, in table order. */
export const MANY_CASES = [
  'postDelayed, plain (baseline)',
  'schedule { every: 60_000 + i }',
  "schedule { cron: '<i % 60> * * * *', tz: 'Europe/Berlin' }",
] as const

/** Distinct cron expressions among the registered cron schedules (`'<i % 60> * * * *'`), all in one zone. */
export const CRON_EXPRESSIONS = 60

/** One registration case. */
export type ManyCase = (typeof MANY_CASES)[number]

/** One registration run. */
export interface ManySample {
  readonly registerMs: number
  /** Heap bytes held after a full collection, minus the empty loop's. */
  readonly bytes: number
  /** `loop.schedules.list()` over all of them (NaN for the plain messages). */
  readonly listMs: number
}

/** What fires, in table order: all due at the same instant, 60 s after the start. */
export const FIRE_CASES = [
  'delayed message, plain (baseline)',
  'schedule { every: 60_000 }',
  "schedule { cron: '1 * * * *', tz: 'Europe/Berlin' }",
] as const

/** One fire case. */
export type FireCase = (typeof FIRE_CASES)[number]

const FIRE_AFTER_MS = 60_000
const HOUR_MS = 3_600_000

/** Registers `count` of `kind` into `loop` (ids `s-<i>`, payload i). */
function register(loop: Loop<TimeoutMessages>, kind: ManyCase | FireCase, count: number): void {
  const type = 'order.timeout'
  if (kind === MANY_CASES[0]) {
    for (let i = 0; i < count; i++) loop.postDelayed(type, i, 1_000 + (i % 59_001))
  } else if (kind === FIRE_CASES[0]) {
    for (let i = 0; i < count; i++) loop.postDelayed(type, i, FIRE_AFTER_MS)
  } else if (kind === MANY_CASES[1]) {
    for (let i = 0; i < count; i++) loop.schedule(`s-${i}`, { every: 60_000 + i }, type, i)
  } else if (kind === MANY_CASES[2]) {
    for (let i = 0; i < count; i++)
      loop.schedule(`s-${i}`, { cron: `${i % CRON_EXPRESSIONS} * * * *`, tz: 'Europe/Berlin' }, type, i)
  } else if (kind === FIRE_CASES[1]) {
    for (let i = 0; i < count; i++) loop.schedule(`s-${i}`, { every: FIRE_AFTER_MS }, type, i)
  } else {
    for (let i = 0; i < count; i++) loop.schedule(`s-${i}`, { cron: '1 * * * *', tz: 'Europe/Berlin' }, type, i)
  }
}

/**
 * Registers `count` of `kind` in a fresh idle loop: time, heap held, then `list()` — checked: every
 * schedule listed once, with a next due time.
 */
export function registerRun(kind: ManyCase, count: number): ManySample {
  const loop = idleLoop()
  collect()
  const before = heapUsed()
  const t0 = performance.now()
  register(loop, kind, count)
  const registerMs = performance.now() - t0
  collect()
  const bytes = (heapUsed() - before) / count
  expectEqual(`${kind}: gauges.delayed after registering`, loop.metrics().gauges.delayed, count)
  if (kind === MANY_CASES[0]) return { registerMs, bytes, listMs: Number.NaN }
  const t1 = performance.now()
  const list = loop.schedules.list()
  const listMs = performance.now() - t1
  expectEqual(`${kind}: schedules listed`, list.length, count)
  expectEqual(`${kind}: listed without a next due time`, list.filter((s) => s.nextAt === undefined).length, 0)
  return { registerMs, bytes, listMs }
}

/**
 * `count` of `kind`, all due 60 s after the start, in a started loop with a no-op handler; advances
 * the virtual clock 60 s. Checked: every message handled once, and each schedule fired once with its
 * next fire posted.
 * @returns wall ms of the `advance()`
 */
export async function fireRun(kind: FireCase, count: number): Promise<number> {
  const clock = new VirtualClock()
  const start = clock.wallNow()
  const loop = createLoop<TimeoutMessages>({ clock, capacity: Math.max(10_000, 2 * count) })
  let handled = 0
  loop.on('order.timeout', () => {
    handled++
  })
  register(loop, kind, count)
  collect()
  const t0 = performance.now()
  await clock.advance(FIRE_AFTER_MS)
  const ms = performance.now() - t0
  expectEqual(`${kind}: handled after the fire`, handled, count)
  expectEqual(`${kind}: counters.succeeded`, loop.metrics().counters.succeeded, count)
  if (kind !== FIRE_CASES[0]) {
    const next = start + (kind === FIRE_CASES[1] ? 2 * FIRE_AFTER_MS : HOUR_MS + FIRE_AFTER_MS)
    const wrong = loop.schedules.list().filter((s) => s.runs !== 1 || s.nextAt !== next).length
    expectEqual(`${kind}: schedules without one run and the next fire at ${new Date(next).toISOString()}`, wrong, 0)
  }
  return ms
}
