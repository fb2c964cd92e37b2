/**
 * The timed, self-checked runs of the `threads` suite: N CPU-bound messages in the loop, on
 * `threaded()` and on plain piscina; the mixed workload (I/O messages next to CPU ones); the payload
 * round trips.
 *
 * @module
 */
import { performance } from 'node:perf_hooks'
import { createLoop } from '@flowing/core'
import { type ThreadPool, threaded } from '@flowing/threads'
import type { Piscina } from 'piscina'
import { BenchError, expectEqual, withDeadline } from '../lib/check.js'
import { median } from '../lib/stats.js'
import { type LatenessSummary, summarizeLateness } from '../lib/wheel-fire.js'
import cpuTask, { type CpuJob, type CpuResult, hashChain } from './cpu-task.js'
import { type LoopDelay, startProbe } from './probe.js'

/** The thread module, as built: plain Node loads it on every thread. */
export const TASK_MODULE = new URL('./cpu-task.js', import.meta.url)

const SEED = 42
const DEADLINE_MS = 120_000

/** Where the CPU-bound work runs. */
export type CpuSubject =
  | { readonly kind: 'in-loop' }
  | { readonly kind: 'threaded'; readonly pool: ThreadPool }
  | { readonly kind: 'piscina'; readonly piscina: Piscina; readonly threads: number }
  /** The loop handing each message to plain piscina (`piscina.run(payload)` as the handler): the loop's share of the overhead. */
  | { readonly kind: 'loop-piscina'; readonly piscina: Piscina; readonly threads: number }

/** One CPU run: messages per second (first post → last result) and what the event loop felt. */
export interface CpuSample {
  readonly msgsPerSecond: number
  readonly delay: LoopDelay
}

/**
 * Hash rounds taking about `targetMs` on this thread, rescaled until the fastest of 7 timed tries is
 * within 5 % (the fastest: on a shared machine it is the work's own cost, the slower ones add waiting).
 */
export function calibrate(targetMs: number): { rounds: number; ms: number } {
  const timed = (rounds: number): number => {
    const t0 = performance.now()
    hashChain(rounds, SEED)
    return performance.now() - t0
  }
  const fastest = (rounds: number): number => Math.min(...Array.from({ length: 7 }, () => timed(rounds)))
  fastest(2_000) // warm-up: the first digests are slow
  let rounds = 1_000
  let ms = fastest(rounds)
  for (let step = 0; step < 6 && Math.abs(ms - targetMs) > 0.05 * targetMs; step++) {
    rounds = Math.max(1, Math.round((rounds * targetMs) / ms))
    ms = fastest(rounds)
  }
  return { rounds, ms }
}

/** The threads a subject runs on (the loop's own for in-loop). */
export function threadsOf(subject: CpuSubject): number {
  if (subject.kind === 'in-loop') return 1
  return subject.kind === 'threaded' ? subject.pool.maxThreads : subject.threads
}

/** The loop's workers for CPU rows: twice the threads, so a thread never waits for the hop back. */
export function loopWorkers(threads: number): number {
  return 2 * threads
}

function jobs(n: number, rounds: number): CpuJob[] {
  return Array.from({ length: n }, (_, i) => ({ i, rounds, seed: SEED }))
}

function checkResults(what: string, results: readonly CpuResult[], n: number, digest: string): void {
  expectEqual(`${what}: results`, results.length, n)
  const seen = new Uint8Array(n)
  for (const r of results) {
    if (r.digest !== digest) throw new BenchError(`${what}: message ${r.i} answered a wrong digest`)
    seen[r.i] = (seen[r.i] as number) + 1
  }
  const once = seen.reduce((k, s) => (s === 1 ? k + 1 : k), 0)
  expectEqual(`${what}: messages handled exactly once`, once, n)
}

/** N CPU-bound messages on `subject`, all posted at once; checks every message answered once, rightly. */
export async function runCpu(subject: CpuSubject, n: number, rounds: number, what: string): Promise<CpuSample> {
  const work = jobs(n, rounds)
  const digest = hashChain(rounds, SEED)
  let run: () => Promise<CpuResult[]>
  let close = async (): Promise<void> => {}
  if (subject.kind === 'piscina') {
    const { piscina } = subject
    run = () => Promise.all(work.map((job) => piscina.run(job) as Promise<CpuResult>))
  } else {
    const loop = cpuLoop(subject, n, loopWorkers(threadsOf(subject)))
    run = () => Promise.all(work.map((job) => loop.request('cpu', job) as Promise<CpuResult>))
    close = async () => {
      const { counters } = loop.metrics()
      expectEqual(`${what}: succeeded`, counters.succeeded, n)
      await loop.stop()
    }
  }
  const probe = startProbe()
  const t0 = performance.now()
  const results = await withDeadline(run(), DEADLINE_MS, () => `${what} did not finish ${n} messages`)
  const ms = performance.now() - t0
  const delay = await probe.stop()
  checkResults(what, results, n, digest)
  await close()
  return { msgsPerSecond: (n / ms) * 1000, delay }
}

/** A loop whose `cpu` handler runs on `subject` (not plain piscina: that one has no loop). */
function cpuLoop(subject: CpuSubject, capacity: number, workers: number) {
  const loop = createLoop<{ cpu: CpuJob }>({ capacity, workers, logger: false })
  if (subject.kind === 'threaded') loop.on('cpu', threaded(TASK_MODULE, { pool: subject.pool }))
  else if (subject.kind === 'loop-piscina' || subject.kind === 'piscina') {
    const { piscina } = subject
    loop.on('cpu', (m) => piscina.run(m.payload) as Promise<CpuResult>)
  } else loop.on('cpu', async (m) => cpuTask(m.payload))
  return loop
}

/**
 * The hop's fixed cost: `n` empty tasks (no hashing), `inFlight` at a time, on `subject`; µs per
 * task. What a task of any size pays on top of its work.
 */
export async function runHop(subject: CpuSubject, n: number, inFlight: number): Promise<number> {
  const job: CpuJob = { i: 0, rounds: 0, seed: SEED }
  let call: () => Promise<unknown>
  let close = async (): Promise<void> => {}
  if (subject.kind === 'piscina') {
    const { piscina } = subject
    call = () => piscina.run(job)
  } else {
    const loop = cpuLoop(subject, n, inFlight)
    call = () => loop.request('cpu', job)
    close = async () => {
      await loop.stop()
    }
  }
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < n) await call()
    }),
  )
  const us = ((performance.now() - t0) / n) * 1000
  await close()
  return us
}

/**
 * How the mixed workload's CPU-bound messages run: not at all (I/O alone), in the loop, threaded, or
 * handed by the handler to plain piscina (what any thread pool costs the loop on this machine).
 */
export type MixedCpu =
  | { readonly kind: 'none' }
  | { readonly kind: 'in-loop' }
  | { readonly kind: 'threaded'; readonly pool: ThreadPool }
  | { readonly kind: 'loop-piscina'; readonly piscina: Piscina }

/** The mixed workload's shape. */
export interface MixedShape {
  readonly cpu: number
  readonly rounds: number
  readonly io: number
  /** An I/O message arrives every this many ms (from the run's start). */
  readonly ioEveryMs: number
  /** Each I/O message awaits a `setTimeout` of this long. */
  readonly ioWaitMs: number
  /** CPU messages at once: the key group's concurrency (the loop has this many workers more for I/O). */
  readonly cpuSlots: number
}

/** The I/O messages' latency (scheduled arrival → handler end, ms) and the event loop's delay. */
export interface MixedSample {
  readonly io: LatenessSummary
  readonly delay: LoopDelay
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The CPU messages are posted at once (key group `cpu`, `cpuSlots` at a time); the I/O messages
 * arrive on a schedule (one every `ioEveryMs`) and are measured from their scheduled arrival, so a
 * blocked loop's late posting counts against it too.
 */
export async function runMixed(cpu: MixedCpu, shape: MixedShape, what: string): Promise<MixedSample> {
  const cpuCount = cpu.kind === 'none' ? 0 : shape.cpu
  const loop = createLoop<{ cpu: CpuJob; io: number }>({
    capacity: cpuCount + shape.io,
    workers: shape.cpuSlots + 64,
    groups: { concurrency: shape.cpuSlots },
  })
  const digest = hashChain(shape.rounds, SEED)
  const cpuResults: CpuResult[] = []
  if (cpu.kind === 'threaded') {
    const handler = threaded<{ cpu: CpuJob; io: number }, 'cpu', CpuResult>(TASK_MODULE, { pool: cpu.pool })
    loop.on('cpu', async (m, ctx) => {
      cpuResults.push(await handler(m, ctx))
    })
  } else if (cpu.kind === 'loop-piscina') {
    const { piscina } = cpu
    loop.on('cpu', async (m) => void cpuResults.push((await piscina.run(m.payload)) as CpuResult))
  } else loop.on('cpu', async (m) => void cpuResults.push(cpuTask(m.payload)))
  const ended = new Float64Array(shape.io).fill(Number.NaN)
  loop.on('io', async (m) => {
    await sleep(shape.ioWaitMs)
    ended[m.payload] = performance.now()
  })
  const probe = startProbe()
  const t0 = performance.now()
  for (const job of jobs(cpuCount, shape.rounds)) loop.post('cpu', job, { group: 'cpu' })
  const fed = new Promise<void>((resolve) => {
    let next = 0
    const feed = setInterval(() => {
      const due = Math.min(shape.io, Math.floor((performance.now() - t0) / shape.ioEveryMs) + 1)
      for (; next < due; next++) loop.post('io', next)
      if (next === shape.io) {
        clearInterval(feed)
        resolve()
      }
    }, 1)
  })
  await withDeadline(
    fed.then(() => loop.drain()),
    DEADLINE_MS,
    () => `${what} did not drain`,
  )
  const delay = await probe.stop()
  checkResults(`${what}, CPU`, cpuResults, cpuCount, digest)
  const latency = Float64Array.from(ended, (end, i) => end - (t0 + i * shape.ioEveryMs))
  const handled = latency.reduce((k, l) => (Number.isNaN(l) ? k : k + 1), 0)
  expectEqual(`${what}: I/O messages handled`, handled, shape.io)
  expectEqual(`${what}: succeeded`, loop.metrics().counters.succeeded, cpuCount + shape.io)
  await loop.stop()
  return { io: summarizeLateness(latency), delay }
}

/** One payload row: what is sent, and whether its buffer is transferred. */
export interface PayloadCase {
  readonly label: string
  readonly kb: number
  readonly transfer: boolean
  /** A fresh payload per message (a transferred buffer is gone after its message). */
  readonly make: () => Uint8Array | { readonly rows: readonly unknown[] }
  /** What the thread must answer. */
  readonly expect: number
}

/** Rows of an object payload of about `bytes` of JSON (each row ≈ 64 bytes). */
export function objectPayload(bytes: number): { rows: { id: number; name: string; price: number }[] } {
  return {
    rows: Array.from({ length: Math.max(1, Math.round(bytes / 64)) }, (_, id) => ({
      id,
      name: `item-${id.toString().padStart(8, '0')}-abcdefghij`,
      price: id * 1.25,
    })),
  }
}

/**
 * Median round trip (ms) of `reps` `loop.request()`s, one at a time, of `c`'s payload through a
 * threaded handler on a one-thread pool; checks every answer and, transferred, that the buffer left.
 */
export async function runPayload(pool: ThreadPool, c: PayloadCase, reps: number): Promise<number> {
  type Payload = ReturnType<PayloadCase['make']>
  const loop = createLoop<{ measure: Payload }>({ workers: 1 })
  loop.on(
    'measure',
    threaded(TASK_MODULE, {
      pool,
      export: 'measure',
      ...(c.transfer ? { transfer: (p: Payload) => [(p as Uint8Array).buffer as ArrayBuffer] } : {}),
    }),
  )
  const payloads = Array.from({ length: reps + 3 }, c.make)
  const times: number[] = []
  for (const [k, payload] of payloads.entries()) {
    const t0 = performance.now()
    const got = await loop.request('measure', payload)
    if (k >= 3) times.push(performance.now() - t0) // the first three warm the path up
    expectEqual(`payload ${c.label}: bytes or rows the thread received`, got, c.expect)
    if (c.transfer)
      expectEqual(`payload ${c.label}: buffer left after the transfer`, (payload as Uint8Array).byteLength, 0)
  }
  await loop.stop()
  return median(times)
}
