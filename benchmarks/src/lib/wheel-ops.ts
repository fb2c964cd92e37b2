/**
 * Schedule and cancel costs of the timing wheel and of `setTimeout`, on the same delays, with the
 * same harness: handles pushed into a plain array, then cancelled in schedule order or in a random
 * order. Each subject has its own loops (a shared loop would be megamorphic and charge the fastest
 * subject most).
 *
 * @module
 */
import { type Timeout, TimingWheel } from '@flowing/timing-wheel'
import { expectEqual } from './check.js'
import { collect } from './gc.js'
import { mulberry32 } from './random.js'

/** Delays and cancel orders, drawn before any clock starts. */
export interface TimerWorkload {
  readonly n: number
  /** What the delays are, for table rows: `random 1 ms–60 s` or `fixed 30 s`. */
  readonly label: string
  /** Integer delays in ms. */
  readonly delays: Float64Array
  /** A random permutation of `0 … n − 1`: the random cancel order. */
  readonly shuffled: Uint32Array
}

/** Builds a workload: `spreadMs` > 0 draws delays uniformly from 1 … spreadMs; 0 uses `fixedMs` for all. */
export function timerWorkload(n: number, spreadMs: number, fixedMs: number, seed: number): TimerWorkload {
  const random = mulberry32(seed)
  const delays = new Float64Array(n)
  for (let i = 0; i < n; i++) delays[i] = spreadMs > 0 ? 1 + Math.floor(random() * spreadMs) : fixedMs
  const shuffled = new Uint32Array(n)
  for (let i = 0; i < n; i++) shuffled[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const t = shuffled[i] as number
    shuffled[i] = shuffled[j] as number
    shuffled[j] = t
  }
  const label = spreadMs > 0 ? `random 1 ms–${spreadMs / 1000} s` : `fixed ${fixedMs / 1000} s`
  return { n, label, delays, shuffled }
}

/** ns per operation of one run. */
export interface OpsSample {
  readonly schedule: number
  readonly cancelInOrder: number
  readonly cancelRandom: number
}

/** A subject: schedules the workload, cancels it in the given order, returns the two times (ms). */
export type OpsSubject = (w: TimerWorkload, random: boolean) => { scheduleMs: number; cancelMs: number }

const noop = (): void => {}

/** `TimingWheel.schedule()` → `Timeout.cancel()`, on the default clock (`performance.now()`). */
export const wheelHandles: OpsSubject = (w, random) => {
  const wheel = new TimingWheel<number>({ maxPending: w.n })
  const { delays, shuffled, n } = w
  const handles: Timeout<number>[] = []
  collect()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) handles.push(wheel.schedule(delays[i] as number, i))
  const t1 = performance.now()
  let cancelled = 0
  if (random)
    for (let i = 0; i < n; i++) cancelled += (handles[shuffled[i] as number] as Timeout<number>).cancel() ? 1 : 0
  else for (let i = 0; i < n; i++) cancelled += (handles[i] as Timeout<number>).cancel() ? 1 : 0
  const t2 = performance.now()
  expectEqual(`wheel schedule()/cancel() ${w.label}: cancel() returned true`, cancelled, n)
  expectEqual(`wheel schedule()/cancel() ${w.label}: pending after cancelling all`, wheel.size, 0)
  return { scheduleMs: t1 - t0, cancelMs: t2 - t1 }
}

/** The lean API: `TimingWheel.add()` → `remove()`, ids in a `Float64Array`. */
export const wheelIds: OpsSubject = (w, random) => {
  const wheel = new TimingWheel<number>({ maxPending: w.n })
  const { delays, shuffled, n } = w
  const ids = new Float64Array(n)
  collect()
  const t0 = performance.now()
  const now = wheel.now()
  for (let i = 0; i < n; i++) ids[i] = wheel.add(now + (delays[i] as number), i)
  const t1 = performance.now()
  let cancelled = 0
  if (random) for (let i = 0; i < n; i++) cancelled += wheel.remove(ids[shuffled[i] as number] as number) ? 1 : 0
  else for (let i = 0; i < n; i++) cancelled += wheel.remove(ids[i] as number) ? 1 : 0
  const t2 = performance.now()
  expectEqual(`wheel add()/remove() ${w.label}: remove() returned true`, cancelled, n)
  return { scheduleMs: t1 - t0, cancelMs: t2 - t1 }
}

/** Node's `setTimeout` → `clearTimeout`. Nothing may fire: the loops never yield. */
export const nodeTimers: OpsSubject = (w, random) => {
  const { delays, shuffled, n } = w
  const handles: NodeJS.Timeout[] = []
  collect()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) handles.push(setTimeout(noop, delays[i] as number))
  const t1 = performance.now()
  if (random) for (let i = 0; i < n; i++) clearTimeout(handles[shuffled[i] as number])
  else for (let i = 0; i < n; i++) clearTimeout(handles[i])
  const t2 = performance.now()
  return { scheduleMs: t1 - t0, cancelMs: t2 - t1 }
}

/** One run: schedule + cancel in schedule order, then schedule + cancel in random order. */
export function measureOps(subject: OpsSubject, w: TimerWorkload): OpsSample {
  const inOrder = subject(w, false)
  const shuffled = subject(w, true)
  const ns = (ms: number): number => (ms * 1e6) / w.n
  return {
    schedule: ns((inOrder.scheduleMs + shuffled.scheduleMs) / 2),
    cancelInOrder: ns(inOrder.cancelMs),
    cancelRandom: ns(shuffled.cancelMs),
  }
}
