/**
 * The workload shapes of the `workloads` suite — CPU-bound, I/O-bound, skewed keys, bursty mixed
 * priorities — and one timed, self-checked run of a shape through Flowing or fastq's promise API.
 *
 * Every random draw (latencies, keys, priorities) happens before the clock starts, from a fixed seed,
 * so every worker count and every subject sees the same messages.
 *
 * @module
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { createLoop, Histogram, type PriorityLevel } from '@flowing/core'
import fastq from 'fastq'
import { BenchError, expectEqual, withDeadline } from './check.js'
import { type BenchMessages, checkLoopAtRest } from './flowing.js'
import { collect } from './gc.js'
import { mulberry32 } from './random.js'

/** The shapes, in run order. */
export type ShapeId = 'cpu-bound' | 'io-bound' | 'skewed-keys' | 'bursty-priorities'

/** Busy work per CPU-bound message (ms): 50 µs. */
export const CPU_WORK_MS = 0.05
/** Median of the I/O-bound latency distribution (ms) and the σ of its logarithm. */
export const IO_MEDIAN_MS = 2
export const IO_SIGMA = 0.5
/** Keys of the skewed case, and the Zipf exponent. */
export const ZIPF_KEYS = 10_000
export const ZIPF_S = 1.1
/** Bursty arrivals: this many posts at once, then a pause. */
export const BURST_SIZE = 5_000
export const BURST_EVERY_MS = 50
/** Keys of the bursty case (uniform), priorities 0–9 uniform. */
export const BURSTY_KEYS = 10_000

/** The messages of one shape: message `i` has `keys[i]`, `priorities[i]` and, for I/O, `latencies[i]`. */
export interface ShapeWorkload {
  readonly id: ShapeId
  readonly n: number
  /** Partition keys (keyed shapes only). */
  readonly keys?: Uint32Array
  readonly keyCount: number
  /** Priorities 0–9 (keyed shapes only; fixed 5 for skewed keys). */
  readonly priorities?: Uint8Array
  /** I/O wait per message, ms (I/O-bound only). */
  readonly latencies?: Float64Array
  /** Bursts of {@link BURST_SIZE} every {@link BURST_EVERY_MS} ms instead of all at once. */
  readonly bursty: boolean
}

/** One line describing a shape, for tables and the results file. */
export function describeShape(id: ShapeId): string {
  switch (id) {
    case 'cpu-bound':
      return `synchronous busy loop on \`performance.now()\` of ${CPU_WORK_MS * 1000} µs per message; no keys, one priority; all posted at once`
    case 'io-bound':
      return `\`await\` a \`setTimeout\` of a log-normal latency (median ${IO_MEDIAN_MS} ms, σ = ${IO_SIGMA}, seeded mulberry32); no keys, one priority; all posted at once`
    case 'skewed-keys':
      return `no-op async handler; keys Zipf(s = ${ZIPF_S}) over ${ZIPF_KEYS.toLocaleString('en-US')} keys (the hottest key gets ≈ ${(100 * zipfTopShare()).toFixed(0)} % of messages); one priority; all posted at once`
    case 'bursty-priorities':
      return `no-op async handler; priorities 0–9 and ${BURSTY_KEYS.toLocaleString('en-US')} keys, uniform; bursts of ${BURST_SIZE.toLocaleString('en-US')} posts every ${BURST_EVERY_MS} ms`
  }
}

function zipfWeights(): Float64Array {
  const w = new Float64Array(ZIPF_KEYS)
  for (let k = 0; k < ZIPF_KEYS; k++) w[k] = 1 / (k + 1) ** ZIPF_S
  return w
}

/** Share of messages on the hottest key under the Zipf distribution. */
export function zipfTopShare(): number {
  const w = zipfWeights()
  let sum = 0
  for (const x of w) sum += x
  return (w[0] as number) / sum
}

/** Builds the `n` messages of shape `id` (seeded: the same messages on every call). */
export function makeShape(id: ShapeId, n: number, seed = 0x5a1e): ShapeWorkload {
  const random = mulberry32(seed)
  switch (id) {
    case 'cpu-bound':
      return { id, n, keyCount: 0, bursty: false }
    case 'io-bound': {
      const latencies = new Float64Array(n)
      for (let i = 0; i < n; i++) {
        // Box–Muller: a standard normal from two uniforms (1 − u keeps the logarithm finite).
        const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
        latencies[i] = IO_MEDIAN_MS * Math.exp(IO_SIGMA * z)
      }
      return { id, n, keyCount: 0, latencies, bursty: false }
    }
    case 'skewed-keys': {
      const w = zipfWeights()
      const cdf = new Float64Array(ZIPF_KEYS)
      let sum = 0
      for (let k = 0; k < ZIPF_KEYS; k++) {
        sum += w[k] as number
        cdf[k] = sum
      }
      const keys = new Uint32Array(n)
      for (let i = 0; i < n; i++) {
        const u = random() * sum
        let lo = 0
        let hi = ZIPF_KEYS - 1
        while (lo < hi) {
          const mid = (lo + hi) >> 1
          if ((cdf[mid] as number) < u) lo = mid + 1
          else hi = mid
        }
        keys[i] = lo
      }
      return { id, n, keys, keyCount: ZIPF_KEYS, priorities: new Uint8Array(n).fill(5), bursty: false }
    }
    case 'bursty-priorities': {
      const keys = new Uint32Array(n)
      const priorities = new Uint8Array(n)
      for (let i = 0; i < n; i++) {
        keys[i] = Math.floor(random() * BURSTY_KEYS)
        priorities[i] = Math.floor(random() * 10)
      }
      return { id, n, keys, keyCount: BURSTY_KEYS, priorities, bursty: true }
    }
  }
}

/** A queue under test in this suite. */
export type SubjectId = 'flowing' | 'fastq'

/** What one run measured. Times in ms. */
export interface ShapeSample {
  readonly shape: ShapeId
  readonly subject: SubjectId
  readonly workers: number
  readonly n: number
  /** Messages per second, first post → idle. */
  readonly throughput: number
  readonly queueWaitP50: number
  readonly queueWaitP99: number
  readonly queueWaitMax: number
  /** Post → handler settled. */
  readonly lifecycleP99: number
  /**
   * perf_hooks `monitorEventLoopDelay` p99. When the run never yielded to the event loop (no sample:
   * the whole run was one blocked turn), the run's duration, with {@link blocked} set.
   */
  readonly eventLoopDelayP99: number
  /** The event loop never got a turn during the run: the delay figure is a lower bound. */
  readonly blocked: boolean
  /** Share of the run the event loop was busy, 0–1. */
  readonly utilization: number
}

const LEVELS = 10

function busyWait(ms: number): number {
  const end = performance.now() + ms
  let spins = 0
  while (performance.now() < end) spins++
  return spins
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Posts messages `0 … n − 1` through `postRange`: all at once, or in bursts of {@link BURST_SIZE}
 * every {@link BURST_EVERY_MS} ms. Resolves when the last one is posted.
 */
function feedShape(w: ShapeWorkload, postRange: (from: number, to: number) => void): Promise<void> {
  if (!w.bursty) {
    postRange(0, w.n)
    return Promise.resolve()
  }
  return new Promise((resolve) => {
    let next = 0
    const burst = (): void => {
      const end = Math.min(next + BURST_SIZE, w.n)
      postRange(next, end)
      next = end
      if (next < w.n) setTimeout(burst, BURST_EVERY_MS)
      else resolve()
    }
    burst()
  })
}

/** A running, instrumented queue for one shape. */
interface Rig {
  readonly postRange: (from: number, to: number) => void
  readonly idle: () => Promise<void>
  /** Checks the counts and invariants, shuts down; returns the queue-wait and lifecycle figures. */
  readonly finish: () => Promise<{ wait: Histogram | QueueWaitSnapshot; lifecycle: Histogram }>
}

interface QueueWaitSnapshot {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

function flowingRig(w: ShapeWorkload, workers: number, what: string): Rig {
  const loop = createLoop<BenchMessages>({ capacity: Math.max(1, w.n), workers })
  const lifecycle = new Histogram()
  const runs = new Uint8Array(w.n)
  // Per-key order among equal priority: the last message index started per (key, priority).
  const lastStarted = new Float64Array(Math.max(1, w.keyCount * LEVELS)).fill(-1)
  const problems: string[] = []
  const { keys, priorities, latencies } = w
  loop.events.on('succeeded', (m) => {
    lifecycle.record(performance.now() - m.postedAt)
  })
  const count = (i: number): void => {
    runs[i] = (runs[i] as number) + 1
  }
  if (w.id === 'cpu-bound') {
    loop.on('tick', async (m) => {
      count(m.payload)
      busyWait(CPU_WORK_MS)
    })
  } else if (latencies !== undefined) {
    loop.on('tick', async (m) => {
      count(m.payload)
      await sleep(latencies[m.payload] as number)
    })
  } else {
    loop.on('tick', async (m) => {
      const i = m.payload
      count(i)
      const slot = (keys?.[i] as number) * LEVELS + (priorities?.[i] as number)
      const previous = lastStarted[slot] as number
      if (previous >= i && problems.length < 5) {
        problems.push(`key ${keys?.[i]}, priority ${priorities?.[i]}: message ${i} started after message ${previous}`)
      }
      lastStarted[slot] = i
    })
  }
  return {
    postRange:
      keys === undefined || priorities === undefined
        ? (from, to) => {
            for (let i = from; i < to; i++) loop.post('tick', i)
          }
        : (from, to) => {
            for (let i = from; i < to; i++) {
              loop.post('tick', i, { key: keys[i] as number, priority: priorities[i] as PriorityLevel })
            }
          },
    idle: () => loop.drain(),
    async finish() {
      checkRuns(what, runs)
      if (problems.length > 0) throw new BenchError(`${what}: per-key order violated:\n  - ${problems.join('\n  - ')}`)
      checkLoopAtRest(what, loop, w.n)
      expectEqual(`${what}: lifecycle recordings`, lifecycle.count, w.n)
      const { queueWait } = loop.metrics()
      expectEqual(`${what}: queue-wait recordings`, queueWait.count, w.n)
      await loop.stop()
      return { wait: { p50: queueWait.p50, p99: queueWait.p99, max: queueWait.max }, lifecycle }
    },
  }
}

function fastqRig(w: ShapeWorkload, workers: number, what: string): Rig {
  const postedAt = new Float64Array(w.n)
  const runs = new Uint8Array(w.n)
  const wait = new Histogram()
  const lifecycle = new Histogram()
  const { latencies } = w
  const q = fastq.promise<unknown, number, void>(async (i) => {
    wait.record(performance.now() - (postedAt[i] as number))
    runs[i] = (runs[i] as number) + 1
    if (latencies !== undefined) await sleep(latencies[i] as number)
    else busyWait(CPU_WORK_MS)
  }, workers)
  return {
    postRange(from, to) {
      for (let i = from; i < to; i++) {
        postedAt[i] = performance.now()
        q.push(i).then(() => lifecycle.record(performance.now() - (postedAt[i] as number)))
      }
    },
    idle: () => q.drained(),
    async finish() {
      // Lifecycle recordings run one microtask after each task settles: let them land.
      await sleep(0)
      checkRuns(what, runs)
      expectEqual(`${what}: idle()`, q.idle(), true)
      expectEqual(`${what}: lifecycle recordings`, lifecycle.count, w.n)
      expectEqual(`${what}: queue-wait recordings`, wait.count, w.n)
      return { wait, lifecycle }
    },
  }
}

function checkRuns(what: string, runs: Uint8Array): void {
  let processed = 0
  for (let i = 0; i < runs.length; i++) {
    if (runs[i] !== 1) throw new BenchError(`${what}: message ${i} ran ${runs[i]} times (expected exactly once)`)
    processed++
  }
  expectEqual(`${what}: messages processed`, processed, runs.length)
}

/**
 * Runs `w` once through a fresh `subject` queue with `workers` workers and checks it: every message
 * ran exactly once; Flowing's counters add up (posted = accepted = succeeded = n, nothing else) and,
 * for keyed shapes, each key's messages of equal priority started in post order.
 *
 * @throws BenchError on any violation, or when the run does not drain within `deadlineMs`
 */
export async function runShape(
  w: ShapeWorkload,
  subject: SubjectId,
  workers: number,
  deadlineMs: number,
): Promise<ShapeSample> {
  const what = `${w.id}, ${subject}, ${workers} worker${workers === 1 ? '' : 's'}`
  const rig = subject === 'flowing' ? flowingRig(w, workers, what) : fastqRig(w, workers, what)
  collect()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const elu0 = performance.eventLoopUtilization()
  const t0 = performance.now()
  await withDeadline(
    feedShape(w, rig.postRange).then(() => rig.idle()),
    deadlineMs,
    () => `${what} did not drain ${w.n} messages`,
  )
  const ms = performance.now() - t0
  const utilization = performance.eventLoopUtilization(elu0).utilization
  delay.disable()
  const { wait, lifecycle } = await rig.finish()
  const waitFigures = wait instanceof Histogram ? { ...wait.snapshot() } : wait
  const blocked = delay.count === 0
  const delayP99 = blocked ? ms : delay.percentile(99) / 1e6
  if (!(ms > 0)) throw new BenchError(`${what}: non-positive duration ${ms}`)
  return {
    shape: w.id,
    subject,
    workers,
    n: w.n,
    throughput: (w.n / ms) * 1000,
    queueWaitP50: waitFigures.p50,
    queueWaitP99: waitFigures.p99,
    queueWaitMax: waitFigures.max,
    lifecycleP99: lifecycle.snapshot().p99,
    eventLoopDelayP99: delayP99,
    blocked,
    utilization,
  }
}
