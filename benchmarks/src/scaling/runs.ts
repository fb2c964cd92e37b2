/**
 * One checked, timed run of each scaling dimension: a drain of a pre-filled queue, a streamed
 * workload over K distinct keys, and a streamed workload beside D delayed messages pending on the
 * wheel (then their cancels). Every run counts the handler's calls against the posts and checks the
 * loop's counters at rest; a drain that never ends fails at the deadline instead of hanging.
 *
 * @module
 */
import { createLoop, type DelayedMessage, type Loop, type LoopOptions, type PriorityLevel } from '@flowing/core'
import { expectEqual, withDeadline } from '../lib/check.js'
import { type BenchMessages, checkLoopAtRest, flowingSubject } from '../lib/flowing.js'
import { collect } from '../lib/gc.js'
import { mulberry32 } from '../lib/random.js'
import { timeRun } from '../lib/subject.js'
import { feed, makeWorkload, STREAM_BATCH, type Workload } from '../lib/workload.js'

/** Keys of the queue-depth and delayed workloads (integers `0 … 9,999`). */
export const KEY_COUNT = 10_000
/** Delays of the pending messages: `DELAY_MIN_MS` + `0 … DELAY_SPREAD_MS − 1` ms, so none comes due in a run. */
export const DELAY_MIN_MS = 10_000
/** See {@link DELAY_MIN_MS}. */
export const DELAY_SPREAD_MS = 60_000

/** ns per message of one queue-depth run. */
export interface DepthSample {
  /** One `post()` into the paused loop, while filling it. */
  readonly post: number
  /** The drain alone, from `start()` until idle, per message. */
  readonly drain: number
  /** Post and drain together: (filling + draining) / Q. */
  readonly total: number
}

/** ns per operation of one delayed-messages run. */
export interface DelayedSample {
  /** One `postDelayed()` while filling the wheel. */
  readonly postDelayed: number
  /** One message of the plain streamed workload run beside the pending ones. */
  readonly beside: number
  /** One `handle.cancel()` of a pending message. */
  readonly cancel: number
}

const NS_PER_MS = 1e6

/** A loop with the counting no-op handler every run uses. */
function countingLoop(options: LoopOptions): { loop: Loop<BenchMessages>; count: () => number } {
  const loop = createLoop<BenchMessages>(options)
  let processed = 0
  loop.on('tick', async () => {
    processed++
  })
  return { loop, count: () => processed }
}

/** Posts workload messages `from … to − 1` with their key and priority. */
function poster(loop: Loop<BenchMessages>, w: Workload): (from: number, to: number) => void {
  const { keys, priorities } = w
  return (from, to) => {
    for (let i = from; i < to; i++) {
      loop.post('tick', i, { key: keys[i] as number, priority: priorities[i] as PriorityLevel })
    }
  }
}

/** The seeded queue-depth / beside workload of `n` messages over {@link KEY_COUNT} keys. */
export function plainWorkload(n: number): Workload {
  return makeWorkload(n, KEY_COUNT, 'random', 0x5ca1)
}

/**
 * Fills a paused loop (capacity Q + {@link STREAM_BATCH}) with the Q messages of `w`, then starts it
 * and times the drain; `reps` fresh loops one after another (so that a small Q is timed over enough
 * messages to rise above the timer's and the collector's noise), their times summed.
 * @throws BenchError when a message is lost or counted twice, or the drain passes `deadlineMs`
 */
export async function depthRun(w: Workload, reps: number, deadlineMs: number): Promise<DepthSample> {
  const q = w.n
  let postMs = 0
  let drainMs = 0
  collect()
  for (let rep = 0; rep < reps; rep++) {
    const { loop, count } = countingLoop({ capacity: q + STREAM_BATCH, workers: 8, autoStart: false })
    const post = poster(loop, w)
    const t0 = performance.now()
    post(0, q)
    const t1 = performance.now()
    loop.start()
    await withDeadline(loop.drain(), deadlineMs, () => `queue depth ${q}: drained ${count()} of ${q}`)
    postMs += t1 - t0
    drainMs += performance.now() - t1
    const what = `queue depth ${q}`
    expectEqual(`${what}: handler calls`, count(), q)
    checkLoopAtRest(what, loop, q)
    await loop.stop()
  }
  const per = NS_PER_MS / (q * reps)
  return { post: postMs * per, drain: drainMs * per, total: (postMs + drainMs) * per }
}

/**
 * The streamed workload `w` (its `keyCount` distinct keys) through the core suite's Flowing subject
 * (8 workers, levels queue): ns per message.
 * @throws BenchError when a message is lost or counted twice, or the run passes `deadlineMs`
 */
export async function keysRun(w: Workload, deadlineMs: number): Promise<number> {
  const sample = await timeRun(flowingSubject({ workers: 8, queue: 'levels' }), w, 'streamed', deadlineMs)
  return (sample.seconds * 1e9) / w.n
}

/** Keys of `w` used at least once, and those used exactly once. */
export function keysUsed(w: Workload): { readonly used: number; readonly once: number } {
  const uses = new Uint8Array(w.keyCount)
  for (const k of w.keys) uses[k] = Math.min(2, (uses[k] as number) + 1)
  let used = 0
  let once = 0
  for (const u of uses) {
    if (u > 0) used++
    if (u === 1) once++
  }
  return { used, once }
}

/** `d` seeded delays in `DELAY_MIN_MS … DELAY_MIN_MS + DELAY_SPREAD_MS − 1` (integer ms). */
export function pendingDelays(d: number): Uint32Array {
  const random = mulberry32(0xde1a)
  const delays = new Uint32Array(d)
  for (let i = 0; i < d; i++) delays[i] = DELAY_MIN_MS + Math.floor(random() * DELAY_SPREAD_MS)
  return delays
}

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length

/**
 * Fills the wheel with `delays.length` pending messages, streams `w` beside them, cancels every
 * pending one, stops the loop and checks it left no timer behind. Then `reps − 1` more fresh loops
 * fill and cancel alone, back to back (no collection between them), so that a small D times enough
 * `postDelayed()` and `cancel()` calls.
 * @throws BenchError when a message is lost, one came due, a cancel failed, or a timer was left
 */
export async function delayedRun(
  delays: Uint32Array,
  w: Workload,
  reps: number,
  deadlineMs: number,
): Promise<DelayedSample> {
  const first = await wheelCycle(delays, w, deadlineMs)
  let { fillMs, cancelMs } = first
  for (let rep = 1; rep < reps; rep++) {
    const next = await wheelCycle(delays, undefined, deadlineMs)
    fillMs += next.fillMs
    cancelMs += next.cancelMs
  }
  const per = NS_PER_MS / (delays.length * reps)
  return { postDelayed: fillMs * per, beside: first.besideNs, cancel: cancelMs * per }
}

/** One loop: fill the wheel, stream `w` beside it (when given), cancel, stop, check. */
async function wheelCycle(
  delays: Uint32Array,
  w: Workload | undefined,
  deadlineMs: number,
): Promise<{ fillMs: number; besideNs: number; cancelMs: number }> {
  const d = delays.length
  const n = w?.n ?? 0
  const what = `${d} delayed pending`
  const timersBefore = timers()
  const { loop, count } = countingLoop({ capacity: Math.max(1, n), workers: 8, maxDelayed: Math.max(d, 1_000_000) })
  const handles: DelayedMessage<BenchMessages, 'tick'>[] = []
  if (w !== undefined) collect() // the repeats run back to back, as the queue-depth repeats do
  const t0 = performance.now()
  for (let i = 0; i < d; i++) handles.push(loop.postDelayed('tick', i, delays[i] as number))
  const fillMs = performance.now() - t0
  expectEqual(`${what}: metrics.gauges.delayed after filling`, loop.metrics().gauges.delayed, d)
  const besideNs = w === undefined ? Number.NaN : await streamBeside(loop, w, count, deadlineMs, what)
  expectEqual(`${what}: metrics.gauges.delayed before cancelling (none may come due)`, loop.metrics().gauges.delayed, d)
  if (w !== undefined) collect()
  const cancelMs = cancelAll(handles, what)
  await withDeadline(loop.stop(), deadlineMs, () => `${what}: stop() did not end`)
  checkDelayedAtRest(what, loop, n, d)
  expectEqual(`${what}: handler calls (no delayed message may run)`, count(), n)
  expectEqual(`${what}: active timers after stop() (before the loop: ${timersBefore})`, timers(), timersBefore)
  return { fillMs, besideNs, cancelMs }
}

async function streamBeside(
  loop: Loop<BenchMessages>,
  w: Workload,
  count: () => number,
  deadlineMs: number,
  what: string,
): Promise<number> {
  const post = poster(loop, w)
  collect()
  const t0 = performance.now()
  const run = feed(post, w.n, 'streamed').then(() => loop.drain())
  await withDeadline(run, deadlineMs, () => `${what}: the streamed workload drained ${count()} of ${w.n}`)
  const ns = ((performance.now() - t0) * NS_PER_MS) / w.n
  expectEqual(`${what}: handler calls after the stream`, count(), w.n)
  return ns
}

function cancelAll(handles: readonly DelayedMessage<BenchMessages, 'tick'>[], what: string): number {
  let refused = 0
  const t0 = performance.now()
  for (const handle of handles) if (!handle.cancel()) refused++
  const ms = performance.now() - t0
  expectEqual(`${what}: cancel() calls that returned false`, refused, 0)
  return ms
}

function checkDelayedAtRest(what: string, loop: Loop<BenchMessages>, streamed: number, d: number): void {
  const { counters, gauges } = loop.metrics()
  expectEqual(`${what}: metrics.counters.accepted`, counters.accepted, streamed + d)
  expectEqual(`${what}: metrics.counters.succeeded`, counters.succeeded, streamed)
  expectEqual(`${what}: metrics.counters.cancelled`, counters.cancelled, d)
  for (const name of ['rejected', 'failed', 'dropped'] as const) {
    expectEqual(`${what}: metrics.counters.${name}`, counters[name], 0)
  }
  for (const name of ['queued', 'running', 'delayed'] as const)
    expectEqual(`${what}: metrics.gauges.${name}`, gauges[name], 0)
}
