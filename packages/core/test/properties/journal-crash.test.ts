/**
 * I8 on virtual time: a loop with a journal is killed at a generated moment (its store handle stops
 * writing, its clock stops — a `kill -9`), a second loop starts on what the store committed, and:
 * every post acknowledged by `flushed()` succeeds at least once across the two; the second loop runs
 * exactly the messages the store kept, once each; per key, the second loop starts them in post order;
 * no delayed message starts before its due time on the wall clock; nothing stays blocked.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, MemoryStore, RetryableError, VirtualClock } from '../../src/index.js'

interface Job {
  readonly n: number
  readonly key: string | undefined
  readonly delayMs: number
  readonly failsFirst: boolean
  readonly workMs: number
}

const job = fc.record({
  key: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
  delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 })),
  failsFirst: fc.boolean(),
  workMs: fc.integer({ min: 0, max: 30 }),
})

const scenario = fc.record({
  jobs: fc.array(job, { minLength: 1, maxLength: 40 }),
  crashAtMs: fc.integer({ min: 0, max: 300 }),
  downMs: fc.integer({ min: 0, max: 500 }),
  workers: fc.integer({ min: 1, max: 4 }),
})

type Run = { n: number; wall: number; attempt: number }

function loopOn(store: MemoryStore, clock: VirtualClock, workers: number, jobs: readonly Job[], runs: Run[]) {
  const loop = createLoop<{ job: { n: number } }>({
    clock,
    store,
    workers,
    logger: false,
    retry: { maxAttempts: 3, baseMs: 20, jitter: 0 },
  })
  loop.on('job', async (m, ctx) => {
    const j = jobs[m.payload.n] as Job
    runs.push({ n: j.n, wall: clock.wallNow(), attempt: ctx.attempt })
    if (j.workMs > 0) await clock.sleep(j.workMs)
    if (j.failsFirst && ctx.attempt === 1) throw new RetryableError('first attempt fails')
  })
  return loop
}

describe('a crash under load (virtual time, the reference store)', () => {
  it('loses no acknowledged post, reruns exactly what the store kept, keeps key order and due times', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ jobs: generated, crashAtMs, downMs, workers }) => {
        const jobs: Job[] = generated.map((j, n) => ({ ...j, n }))
        const clock = new VirtualClock()
        const store = new MemoryStore('memory', () => clock.wallNow())
        const before: Run[] = []
        const loop = loopOn(store, clock, workers, jobs, before)
        // The store's commit count when each message succeeded: its row's removal is in the next commit.
        const succeededAt = new Map<number, number>()
        loop.events.on('succeeded', (m) => succeededAt.set(m.payload.n, store.commits))
        loop.start()
        const due = new Map<number, number>()
        for (const j of jobs) {
          const options = j.key === undefined ? {} : { key: j.key }
          due.set(j.n, clock.wallNow() + j.delayMs)
          if (j.delayMs > 0) loop.postDelayed('job', { n: j.n }, j.delayMs, options)
          else loop.post('job', { n: j.n }, options)
        }
        const acked = loop.flushed()
        await clock.advance(0)
        await acked // every post is acknowledged as durable before the crash
        await clock.advance(crashAtMs)
        // kill -9: this store handle writes nothing more and this clock never moves again.
        const reopened = store.reopen()
        const kept = reopened.recovered().messages.map((r) => (JSON.parse(r.payloadJson ?? 'null') as { n: number }).n)
        const commitsAtCrash = store.commits
        for (const [n, at] of succeededAt) if (commitsAtCrash > at) expect(kept).not.toContain(n)
        const clock2 = new VirtualClock(0, clock.wallNow() + downMs)
        const after: Run[] = []
        const loop2 = loopOn(reopened, clock2, workers, jobs, after)
        loop2.start()
        await clock2.run()
        await loop2.drain()
        await loop2.stop()

        const succeeded = new Set<number>()
        for (const runs of [before, after]) {
          const last = new Map<number, Run>()
          for (const r of runs) last.set(r.n, r)
          for (const [n, r] of last) if (!(jobs[n]?.failsFirst === true && r.attempt === 1)) succeeded.add(n)
        }
        // I8: every acknowledged post succeeded, before the crash or after it.
        expect([...succeeded].sort((x, y) => x - y)).toEqual(jobs.map((j) => j.n))
        // The second loop ran exactly what the store kept: nothing finished ran again.
        expect([...new Set(after.map((r) => r.n))].sort((x, y) => x - y)).toEqual([...kept].sort((x, y) => x - y))
        // Never early, before or after the crash.
        for (const r of [...before, ...after]) expect(r.wall).toBeGreaterThanOrEqual(due.get(r.n) as number)
        // Per key, the restarted loop starts undelayed messages in post order (ordered retries included).
        const firstRuns = [...new Set(after.map((r) => r.n))]
        for (const key of ['a', 'b', 'c']) {
          const order = firstRuns.filter((n) => jobs[n]?.key === key && jobs[n]?.delayMs === 0)
          expect(order).toEqual([...order].sort((x, y) => x - y))
        }
        // Nothing stays blocked, and the store is empty once everything finished.
        expect(loop2.metrics().counters.accepted).toBe(kept.length)
        expect(reopened.rows.messages).toBe(0)
      }),
      { numRuns: 150 },
    )
  }, 60_000)
})
