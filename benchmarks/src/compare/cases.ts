/**
 * The code of `compare-builds`' cases, written against one build of `@flowing/core` handed in as a
 * module object (never imported here: the types come from the workspace's core, the values from
 * whichever `dist/` the caller loaded).
 *
 * `compare-builds` imports this file once per build under a distinct `?build=` query, which makes a
 * distinct module instance: each build gets its own posting loops and handlers, so V8's feedback at
 * their call sites (`loop.post`, `loop.tryPost`) sees one build's classes only, and neither build pays
 * for the other's shapes (a shared call site would turn polymorphic and charge both, unevenly).
 *
 * @module
 */
import type * as Core from '@flowing/core'
import { expectEqual, withDeadline } from '../lib/check.js'
import type { BenchMessages } from '../lib/flowing.js'
import { feed, idempotencyKeys, type Mode, stringKeys, type Workload } from '../lib/workload.js'
import { type CaseId, WORKERS } from './specs.js'

/** A build's `@flowing/core` module. */
export type CoreModule = typeof Core

type BenchLoop = Core.Loop<BenchMessages>
type Post = (from: number, to: number) => void

/** A run: processes `n` units and returns the seconds it took. */
export type Run = (n: number) => Promise<number>

/** A run that has not drained after this long lost a message: it fails instead of hanging. */
const DEADLINE_MS = 300_000

/** A per-type limit no run reaches, 10⁹ starts/s: only its bookkeeping is paid (as in the flow suite). */
const NEVER_BINDS = { max: 1_000_000, perMs: 1 } as const

/** The one key group of the features case (`groups: { concurrency: 8 }` never holds 8 workers back). */
const GROUP = 'tenant-a'

/** The cases' runs on `core`, over the first `n` messages of `workload`. */
export function buildRuns(core: CoreModule, workload: Workload): Record<CaseId, Run> {
  return {
    'streamed-int': (n) => throughput(core, n, 'streamed', () => postInts(workload)),
    'streamed-str': (n) => throughput(core, n, 'streamed', () => postStrings(workload, stringKeys(workload))),
    'burst-int': (n) => throughput(core, n, 'burst', () => postInts(workload)),
    features: (n) => featuresOn(core, workload, n),
    idempotent: (n) => throughput(core, n, 'streamed', () => postIdempotent(workload)),
    'traces-all': (n) => throughput(core, n, 'streamed', () => postInts(workload), { traces: 'all' }),
    refused: (n) => refusedCalls(core, n),
    request: (n) => roundTrips(core, n),
  }
}

/** A loop whose `tick` handler is a counting no-op; `handled()` reads the count. */
function countingLoop(core: CoreModule, options: Core.LoopOptions, on?: Core.RegisterOptions) {
  const loop = core.createLoop<BenchMessages>(options)
  let handled = 0
  loop.on(
    'tick',
    async () => {
      handled++
    },
    on,
  )
  return { loop, handled: () => handled }
}

// Two posting loops, not one with a conditional: each call site sees one key type.
function postInts(workload: Workload): (loop: BenchLoop) => Post {
  const { keys, priorities } = workload
  return (loop) => (from, to) => {
    for (let i = from; i < to; i++) {
      loop.post('tick', i, { key: keys[i] as number, priority: priorities[i] as Core.PriorityLevel })
    }
  }
}

function postStrings(workload: Workload, keys: readonly string[]): (loop: BenchLoop) => Post {
  const { priorities } = workload
  return (loop) => (from, to) => {
    for (let i = from; i < to; i++) {
      loop.post('tick', i, { key: keys[i] as string, priority: priorities[i] as Core.PriorityLevel })
    }
  }
}

function postIdempotent(workload: Workload): (loop: BenchLoop) => Post {
  const { keys, priorities } = workload
  const ids = idempotencyKeys(workload)
  return (loop) => (from, to) => {
    for (let i = from; i < to; i++) {
      const priority = priorities[i] as Core.PriorityLevel
      loop.post('tick', i, { key: keys[i] as number, priority, idempotencyKey: ids[i] as string })
    }
  }
}

/**
 * Throughput: the posting loop is prepared (keys built) before the clock starts; `options` over the
 * shared ones (capacity n, {@link WORKERS} workers).
 */
function throughput(
  core: CoreModule,
  n: number,
  mode: Mode,
  prepare: () => (loop: BenchLoop) => Post,
  options: Core.LoopOptions = {},
) {
  const poster = prepare()
  const { loop, handled } = countingLoop(core, { ...options, capacity: n, workers: WORKERS })
  return timeDrained(`${mode}`, loop, handled, n, () => feed(poster(loop), n, mode))
}

async function featuresOn(core: CoreModule, workload: Workload, n: number): Promise<number> {
  const ids = idempotencyKeys(workload)
  const { keys, priorities } = workload
  const options = { capacity: n, workers: WORKERS, retry: { maxAttempts: 3 }, groups: { concurrency: WORKERS } }
  const { loop, handled } = countingLoop(core, options, { rateLimit: NEVER_BINDS })
  const post: Post = (from, to) => {
    for (let i = from; i < to; i++) {
      const priority = priorities[i] as Core.PriorityLevel
      loop.post('tick', i, { key: keys[i] as number, priority, idempotencyKey: ids[i] as string, group: GROUP })
    }
  }
  const seconds = await timeDrained('features on', loop, handled, n, () => feed(post, n, 'streamed'), false)
  const { counters } = loop.metrics()
  expectEqual('features on: metrics.counters.rateLimited (the limit must never bind)', counters.rateLimited, 0)
  expectEqual('features on: metrics.counters.retried', counters.retried, 0)
  await loop.stop()
  return seconds
}

/**
 * Times `feedAll` and the drain after it, then checks that every post was handled once and counted
 * as such; stops the loop unless `stop` is false (the caller checks more first).
 */
async function timeDrained(
  what: string,
  loop: BenchLoop,
  handled: () => number,
  n: number,
  feedAll: () => Promise<void>,
  stop = true,
): Promise<number> {
  const t0 = performance.now()
  const done = feedAll().then(() => loop.drain())
  await withDeadline(done, DEADLINE_MS, () => `${what}: ${handled()} of ${n} handled`)
  const seconds = (performance.now() - t0) / 1000
  expectEqual(`${what}: messages handled`, handled(), n)
  const { counters } = loop.metrics()
  expectEqual(`${what}: metrics.counters.posted`, counters.posted, n)
  expectEqual(`${what}: metrics.counters.succeeded`, counters.succeeded, n)
  if (stop) await loop.stop()
  return seconds
}

/** Refused tryPosts on a full, paused loop; then the 64 queued run, so the loop ends at rest. */
async function refusedCalls(core: CoreModule, n: number): Promise<number> {
  const queued = 64
  const { loop, handled } = countingLoop(core, { capacity: queued, overflow: 'reject', autoStart: false })
  for (let i = 0; i < queued; i++) loop.post('tick', i)
  let other = 0
  const t0 = performance.now()
  for (let i = 0; i < n; i++) if (loop.tryPost('tick', i).status !== 'full') other++
  const seconds = (performance.now() - t0) / 1000
  expectEqual('tryPost refused: calls not refused as full', other, 0)
  const { counters } = loop.metrics()
  expectEqual('tryPost refused: metrics.counters.rejected', counters.rejected, n)
  expectEqual('tryPost refused: metrics.counters.posted', counters.posted, n + queued)
  void loop.start()
  await withDeadline(loop.drain(), DEADLINE_MS, () => `tryPost refused: ${handled()} of ${queued} handled`)
  expectEqual('tryPost refused: queued messages handled', handled(), queued)
  await loop.stop()
  return seconds
}

async function roundTrips(core: CoreModule, n: number): Promise<number> {
  const loop = core.createLoop<BenchMessages>({ capacity: Math.max(1, n), workers: WORKERS })
  loop.on('tick', async (m) => 2 * m.payload)
  const t0 = performance.now()
  let sum = 0
  for (let i = 0; i < n; i++) sum += await loop.request<'tick', number>('tick', i)
  const seconds = (performance.now() - t0) / 1000
  expectEqual('request round trip: sum of results', sum, n * (n - 1))
  expectEqual('request round trip: metrics.counters.succeeded', loop.metrics().counters.succeeded, n)
  await loop.stop()
  return seconds
}
