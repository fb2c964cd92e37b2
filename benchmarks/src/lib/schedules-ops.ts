/**
 * Per-operation costs of keyed delays in `@flowing/core`: a plain `postDelayed` (the baseline), one
 * with a fresh `jobKey`, the two cancels, the three replace modes, and `setTimeout` / `clearTimeout`
 * for scale. Every loop runs on a `VirtualClock` with `autoStart: false`, so nothing fires or runs
 * while a section is timed; the virtual time stays 0, so a due time equals the delay.
 *
 * @module
 */
import { createLoop, type DelayedMessage, type Loop, VirtualClock } from '@flowing/core'
import { expectEqual } from './check.js'
import { collect } from './gc.js'
import { mulberry32 } from './random.js'

/** The message map: one type, its payload the message index. */
export interface TimeoutMessages {
  'order.timeout': number
}

/** Operations measured, in table order. */
export const OPS_CASES = [
  'postDelayed, no job key',
  'postDelayed, fresh jobKey',
  'handle.cancel(), plain delayed',
  'loop.jobs.cancel(jobKey)',
  "replace: jobKeyMode 'replace'",
  "replace: jobKeyMode 'preserve_run_at'",
  "replace: jobKeyMode 'debounce', maxWaitMs",
  'setTimeout (peer)',
  'clearTimeout (peer)',
] as const

/** One operation's name. */
export type OpsCase = (typeof OPS_CASES)[number]

/** Delays and orders, drawn before any clock starts (the same for every case of a run). */
export interface KeyedWorkload {
  readonly n: number
  /** Delays of the first posts: integers 1,000 … 60,000 ms. */
  readonly delays: Float64Array
  /** Delays of the replacing posts, drawn the same way. */
  readonly redelays: Float64Array
  /** A random permutation of `0 … n − 1`: the order of cancels and replacing posts. */
  readonly order: Uint32Array
}

/** The debounce limit of the debounce row (ms after the burst's first post). */
export const MAX_WAIT_MS = 30_000
const MIN_DELAY_MS = 1_000
const MAX_DELAY_MS = 60_000

/** Draws a workload of `n` messages from `seed`. */
export function keyedWorkload(n: number, seed: number): KeyedWorkload {
  const random = mulberry32(seed)
  const draw = (): Float64Array => {
    const d = new Float64Array(n)
    for (let i = 0; i < n; i++) d[i] = MIN_DELAY_MS + Math.floor(random() * (MAX_DELAY_MS - MIN_DELAY_MS + 1))
    return d
  }
  const delays = draw()
  const redelays = draw()
  const order = new Uint32Array(n)
  for (let i = 0; i < n; i++) order[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const t = order[i] as number
    order[i] = order[j] as number
    order[j] = t
  }
  return { n, delays, redelays, order }
}

/** The delay range, for labels: `1 s–60 s`. */
export const DELAY_LABEL = `${MIN_DELAY_MS / 1000} s–${MAX_DELAY_MS / 1000} s`

/** Fresh job-key strings `payment-timeout:order-<i>` (built anew per use, so no hash is cached). */
function jobKeys(n: number): string[] {
  const keys: string[] = []
  for (let i = 0; i < n; i++) keys.push(`payment-timeout:order-${i}`)
  return keys
}

/** A loop that accepts posts and runs nothing: virtual clock, not started. */
export function idleLoop(): Loop<TimeoutMessages> {
  const loop = createLoop<TimeoutMessages>({ clock: new VirtualClock(), autoStart: false })
  loop.on('order.timeout', () => {})
  return loop
}

/** Times `body` after a full collection; returns ms. */
function timed(body: () => void): number {
  collect()
  const t0 = performance.now()
  body()
  return performance.now() - t0
}

/** One group of cases measured together: returns ms for each of its cases. */
interface OpsGroup {
  readonly cases: readonly OpsCase[]
  run(w: KeyedWorkload): number[]
}

type Handle = DelayedMessage<TimeoutMessages>

const plain: OpsGroup = {
  cases: ['postDelayed, no job key', 'handle.cancel(), plain delayed'],
  run(w) {
    const { n, delays, order } = w
    const loop = idleLoop()
    const handles: Handle[] = []
    const post = timed(() => {
      for (let i = 0; i < n; i++) handles.push(loop.postDelayed('order.timeout', i, delays[i] as number))
    })
    expectEqual('plain postDelayed: gauges.delayed', loop.metrics().gauges.delayed, n)
    let cancelled = 0
    const cancel = timed(() => {
      for (let i = 0; i < n; i++) cancelled += (handles[order[i] as number] as Handle).cancel() ? 1 : 0
    })
    expectEqual('handle.cancel(): calls that returned true', cancelled, n)
    expectEqual('handle.cancel(): gauges.delayed after', loop.metrics().gauges.delayed, 0)
    return [post, cancel]
  },
}

const keyed: OpsGroup = {
  cases: ['postDelayed, fresh jobKey', 'loop.jobs.cancel(jobKey)'],
  run(w) {
    const { n, delays, order } = w
    const loop = idleLoop()
    const handles: Handle[] = []
    const keys = jobKeys(n)
    const post = timed(() => {
      for (let i = 0; i < n; i++)
        handles.push(loop.postDelayed('order.timeout', i, delays[i] as number, { jobKey: keys[i] as string }))
    })
    expectEqual('keyed postDelayed: loop.jobs.size', loop.jobs.size, n)
    const again = jobKeys(n)
    let cancelled = 0
    const cancel = timed(() => {
      for (let i = 0; i < n; i++)
        cancelled += loop.jobs.cancel(again[order[i] as number] as string) === 'cancelled' ? 1 : 0
    })
    expectEqual("loop.jobs.cancel(): calls that answered 'cancelled'", cancelled, n)
    expectEqual('loop.jobs.cancel(): loop.jobs.size after', loop.jobs.size, 0)
    return [post, cancel]
  },
}

type ReplaceOptions = { readonly jobKeyMode: 'replace' | 'preserve_run_at' | 'debounce'; readonly maxWaitMs?: number }

/** n keyed messages waiting; then, timed, n posts with the same keys (fresh strings) in `mode`. */
function replaceGroup(label: OpsCase, mode: ReplaceOptions, expectedDue: (w: KeyedWorkload, i: number) => number) {
  return {
    cases: [label],
    run(w: KeyedWorkload): number[] {
      const { n, delays, redelays, order } = w
      const loop = idleLoop()
      const first = jobKeys(n)
      for (let i = 0; i < n; i++)
        loop.postDelayed('order.timeout', i, delays[i] as number, { jobKey: first[i], ...mode })
      const keys = jobKeys(n)
      const handles: Handle[] = []
      const ms = timed(() => {
        for (let j = 0; j < n; j++) {
          const i = order[j] as number
          handles.push(
            loop.postDelayed('order.timeout', i, redelays[i] as number, { jobKey: keys[i] as string, ...mode }),
          )
        }
      })
      checkReplaced(label, loop, w, (i) => expectedDue(w, i))
      return [ms]
    },
  } satisfies OpsGroup
}

/** After a replace run: n keyed messages waiting, n cancelled, each due when its mode says. */
function checkReplaced(label: string, loop: Loop<TimeoutMessages>, w: KeyedWorkload, due: (i: number) => number): void {
  expectEqual(`${label}: loop.jobs.size`, loop.jobs.size, w.n)
  expectEqual(`${label}: counters.cancelled (the replaced messages)`, loop.metrics().counters.cancelled, w.n)
  expectEqual(`${label}: gauges.delayed`, loop.metrics().gauges.delayed, w.n)
  let wrong = 0
  for (let i = 0; i < w.n; i++) {
    const job = loop.jobs.get(`payment-timeout:order-${i}`)
    if (job?.payload !== i || job.dueAt !== due(i)) wrong++
  }
  expectEqual(`${label}: messages with the wrong payload or due time`, wrong, 0)
}

const peer: OpsGroup = {
  cases: ['setTimeout (peer)', 'clearTimeout (peer)'],
  run(w) {
    const { n, delays, order } = w
    const noop = (): void => {}
    const handles: NodeJS.Timeout[] = []
    // Nothing fires: the timed loops never yield to the event loop.
    const post = timed(() => {
      for (let i = 0; i < n; i++) handles.push(setTimeout(noop, delays[i] as number))
    })
    const cancel = timed(() => {
      for (let i = 0; i < n; i++) clearTimeout(handles[order[i] as number])
    })
    return [post, cancel]
  },
}

/** The groups, in run order (each run measures every group once, so drift hits all alike). */
export const OPS_GROUPS: readonly OpsGroup[] = [
  plain,
  keyed,
  replaceGroup("replace: jobKeyMode 'replace'", { jobKeyMode: 'replace' }, (w, i) => w.redelays[i] as number),
  replaceGroup(
    "replace: jobKeyMode 'preserve_run_at'",
    { jobKeyMode: 'preserve_run_at' },
    (w, i) => w.delays[i] as number,
  ),
  replaceGroup(
    "replace: jobKeyMode 'debounce', maxWaitMs",
    { jobKeyMode: 'debounce', maxWaitMs: MAX_WAIT_MS },
    (w, i) => Math.min(w.redelays[i] as number, MAX_WAIT_MS),
  ),
  peer,
]
