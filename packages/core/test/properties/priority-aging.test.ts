/**
 * BRIEF I3 — priority with fairness. Three properties against a reference order written from the
 * brief (rank `postedAt + priority × agingMs`, then post order; strict `(priority, seq)` when aging is
 * off):
 * - a backlog posted before `start()` runs in exactly the reference order (differential test);
 * - with posts spread over virtual time, the aging bound holds: nobody is overtaken by a more urgent
 *   message posted `agingMs × Δpriority` or more after it;
 * - with keys and several workers, every start picks the most urgent *runnable* message, and a worker
 *   never idles while a runnable message waits.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, type PriorityLevel, VirtualClock } from '../../src/index.js'
import {
  agingArb,
  failureArb,
  flush,
  type JobMessage,
  type Jobs,
  keyArb,
  latencyArb,
  optionsOf,
  type PostSpec,
  PROPERTY_TIMEOUT_MS,
  priorityArb,
  queueKindArb,
  Recorder,
  referenceCompare,
  runJob,
  show,
} from './harness.js'

// Half the messages crowd one level, so its FIFO grows (and wraps) past its initial 16 slots.
const crowdedPriorityArb: fc.Arbitrary<PriorityLevel> = fc.oneof(priorityArb, fc.constant(4 as PriorityLevel))

const keylessSpecArb: fc.Arbitrary<PostSpec> = fc.record({
  key: fc.constant(undefined),
  priority: crowdedPriorityArb,
  latency: latencyArb,
  failure: failureArb,
  followUp: fc.constant(false),
  overflow: fc.constant(undefined),
})

const keyedSpecArb: fc.Arbitrary<PostSpec> = fc.record({
  key: keyArb,
  priority: priorityArb,
  latency: latencyArb,
  failure: failureArb,
  followUp: fc.constant(false),
  overflow: fc.constant(undefined),
})

/** Posts with a pause of virtual time before each (often 0: same-instant ties matter too). */
const timedPostsArb = (spec: fc.Arbitrary<PostSpec>) =>
  fc.array(fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 })), spec }), {
    minLength: 1,
    maxLength: 60,
    size: 'medium',
  })

type Command =
  | { readonly kind: 'post'; readonly spec: PostSpec }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'resize'; readonly workers: number }
  | { readonly kind: 'pause' }
  | { readonly kind: 'resume' }

const commandsArb = (spec: fc.Arbitrary<PostSpec>, withWorkers: boolean): fc.Arbitrary<Command[]> =>
  fc.array(
    fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('post' as const), spec }) },
      {
        weight: 4,
        arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 25 }) }),
      },
      {
        weight: withWorkers ? 1 : 0,
        arbitrary: fc.record({ kind: fc.constant('resize' as const), workers: fc.integer({ min: 1, max: 4 }) }),
      },
      { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
    ),
    { minLength: 1, maxLength: 60, size: 'medium' },
  )

describe('Loop', () => {
  describe('invariant I3 (priority with fairness)', () => {
    it('runs a backlog posted before start() in (postedAt + priority × agingMs, seq) order', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(agingArb, queueKindArb, timedPostsArb(keylessSpecArb), async (agingMs, queue, posts) => {
          const clock = new VirtualClock()
          const loop = createLoop<Jobs>({ workers: 1, agingMs, queue, autoStart: false, clock })
          const recorder = new Recorder(loop)
          loop.on('job', (msg) => runJob(clock, msg.payload, () => {}))
          const all: JobMessage[] = []
          for (const [i, { gap, spec }] of posts.entries()) {
            await clock.advance(gap)
            all.push(loop.post('job', { ...spec, tag: i }, optionsOf(spec)))
          }
          expect(recorder.started).toEqual([])
          loop.start()
          await clock.run()
          await loop.drain()
          const expected = [...all].sort(referenceCompare(agingMs)).map(show)
          expect(recorder.started.map(show)).toEqual(expected)
        }),
        { numRuns: 200 },
      )
    })

    it('never lets a more urgent message overtake one posted agingMs × Δpriority or more earlier (one worker, posts over time)', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(
          agingArb,
          queueKindArb,
          commandsArb(keylessSpecArb, false),
          async (agingMs, queue, commands) => {
            const clock = new VirtualClock()
            const loop = createLoop<Jobs>({ workers: 1, agingMs, queue, clock })
            const recorder = new Recorder(loop)
            const violations: string[] = []
            const compare = referenceCompare(agingMs)
            // For each message: how many had started when it was posted, and its own start index.
            const startsAtPost = new Map<number, number>()
            const startIndex = new Map<number, number>()
            loop.events.on('posted', (m) => startsAtPost.set(m.seq, recorder.started.length))
            loop.events.on('started', (m) => {
              startIndex.set(m.seq, recorder.started.length - 1)
              // One worker, no keys: the start must be the reference minimum of everything waiting.
              for (const w of recorder.waiting.values())
                if (compare(w, m) < 0) violations.push(`${show(m)} started while ${show(w)} waited`)
            })
            loop.on('job', (msg) => runJob(clock, msg.payload, () => {}))
            const all: JobMessage[] = []
            for (const [i, c] of commands.entries()) {
              if (c.kind === 'post') all.push(loop.post('job', { ...c.spec, tag: i }, optionsOf(c.spec)))
              else if (c.kind === 'advance') await clock.advance(c.ms)
              else if (c.kind === 'pause') loop.pause()
              else if (c.kind === 'resume') loop.resume()
              await flush()
            }
            loop.start()
            await clock.run()
            await loop.drain()

            expect(violations).toEqual([])
            expect(startIndex.size).toBe(all.length)
            // The bound, pairwise: m' (posted after m, while m waited) started first ⇒ it was more urgent
            // and posted less than agingMs × Δpriority after m.
            for (const m of all) {
              for (const later of all) {
                if (later.seq <= m.seq) continue
                const mStart = startIndex.get(m.seq) ?? -1
                const waitingWhenPosted = mStart >= (startsAtPost.get(later.seq) ?? 0)
                if (!waitingWhenPosted || (startIndex.get(later.seq) ?? -1) > mStart) continue
                const bound = agingMs * (m.priority - later.priority)
                expect(
                  later.priority < m.priority && later.postedAt - m.postedAt < bound,
                  `${show(later)} overtook ${show(m)}`,
                ).toBe(true)
              }
            }
          },
        ),
        { numRuns: 150 },
      )
    })

    it('starts the most urgent runnable message (key not busy) and never idles a worker while one waits', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      const setupArb = fc.record({
        workers: fc.integer({ min: 1, max: 4 }),
        agingMs: agingArb,
        queue: queueKindArb,
      })
      await fc.assert(
        fc.asyncProperty(setupArb, commandsArb(keyedSpecArb, true), async (setup, commands) => {
          const clock = new VirtualClock()
          const loop = createLoop<Jobs>({ ...setup, clock })
          const recorder = new Recorder(loop)
          const violations: string[] = []
          const compare = referenceCompare(setup.agingMs)
          let workers = setup.workers
          loop.events.on('started', (m) => {
            // The recorder already marked m's key busy; before this start it was free.
            for (const w of recorder.waiting.values()) {
              const runnable = w.key === undefined || w.key === m.key || !recorder.busy.has(w.key)
              if (runnable && compare(w, m) < 0) violations.push(`${show(m)} started while runnable ${show(w)} waited`)
            }
          })
          loop.on('job', (msg) => runJob(clock, msg.payload, () => {}))
          for (const [i, c] of commands.entries()) {
            if (c.kind === 'post') loop.post('job', { ...c.spec, tag: i }, optionsOf(c.spec))
            else if (c.kind === 'advance') await clock.advance(c.ms)
            else if (c.kind === 'resize') {
              workers = c.workers
              loop.resize(workers)
            } else if (c.kind === 'pause') loop.pause()
            else loop.resume()
            await flush()
            // Work conservation: a free worker never coexists with a runnable waiting message.
            if (loop.state === 'running' && loop.running < workers) {
              const idleWith = [...recorder.waiting.values()].filter((w) => recorder.runnable(w))
              if (idleWith.length > 0)
                violations.push(`after command ${i}: ${loop.running}/${workers} busy, runnable ${idleWith.map(show)}`)
            }
          }
          loop.start()
          await clock.run()
          await loop.drain()
          expect(violations).toEqual([])
          expect(recorder.waiting.size).toBe(0)
        }),
        { numRuns: 150 },
      )
    })

    it('keeps post order within one level while its queue grows past its initial size and wraps around', async () => {
      for (const queue of ['levels', 'heap'] as const) {
        const clock = new VirtualClock()
        const loop = createLoop<Jobs>({ workers: 1, queue, clock })
        const recorder = new Recorder(loop)
        loop.on('job', (msg) => runJob(clock, msg.payload, () => {}))
        const job = { latency: 1, failure: 'none', followUp: false, tag: 0 } as const
        for (let i = 0; i < 12; i++) loop.post('job', job, { priority: 4 })
        await clock.advance(6) // the level's head moves off slot 0
        for (let i = 0; i < 30; i++) loop.post('job', job, { priority: 4 }) // 36 waiting: grows with a wrapped head
        await clock.run()
        expect(recorder.started.map((m) => m.seq)).toEqual(Array.from({ length: 42 }, (_, i) => i + 1))
      }
    })

    it('orders by priority when priority × agingMs overflows to Infinity (huge finite agingMs)', async () => {
      // Regression: with agingMs = 1e308 the linear rank of every priority ≥ 2 was Infinity, and
      // Infinity − Infinity is NaN, so the (rank, seq) comparator fell back to post order.
      const clock = new VirtualClock()
      const loop = createLoop<Jobs>({ workers: 1, agingMs: 1e308, autoStart: false, clock })
      const recorder = new Recorder(loop)
      loop.on('job', () => undefined)
      const job = { latency: 0, failure: 'none', followUp: false, tag: 0 } as const
      for (const priority of [9, 5, 2] as PriorityLevel[]) loop.post('job', job, { priority })
      loop.start()
      await clock.run()
      expect(recorder.started.map((m) => m.priority)).toEqual([2, 5, 9])
    })
  })
})
