/**
 * BRIEF I2 — per-key serialization. Handlers track which keys are inside a handler (enter/exit) and
 * in which order each key's messages start; a reference model holds every key's posted messages in
 * post order. Random keys, priorities, latencies, failures, resizes, pauses and time steps.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, type MessageKey, VirtualClock } from '../../src/index.js'
import {
  failureArb,
  flush,
  type JobMessage,
  type Jobs,
  keyArb,
  latencyArb,
  optionsOf,
  type PostSpec,
  PROPERTY_TIMEOUT_MS,
  queueKindArb,
  Recorder,
  runJob,
  show,
  type ValueOf,
} from './harness.js'

type Command =
  | { readonly kind: 'post'; readonly spec: PostSpec }
  | { readonly kind: 'burst'; readonly specs: readonly PostSpec[] }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'resize'; readonly workers: number }
  | { readonly kind: 'pause' }
  | { readonly kind: 'resume' }

// Few priority levels so that many same-key messages share one: that is where order is promised.
const specArb: fc.Arbitrary<PostSpec> = fc.record({
  key: keyArb,
  priority: fc.constantFrom(0, 1, 5),
  latency: latencyArb,
  failure: failureArb,
  followUp: fc.constant(false),
  overflow: fc.constant(undefined),
})

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('post' as const), spec: specArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      specs: fc.array(specArb, { minLength: 2, maxLength: 8 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 25 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('resize' as const), workers: fc.integer({ min: 1, max: 5 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
)

const setupArb = fc.record({
  workers: fc.integer({ min: 1, max: 5 }),
  agingMs: fc.constantFrom(0, 3, 50, Number.POSITIVE_INFINITY),
  queue: queueKindArb,
  dispatchBudget: fc.constantFrom(1, 3, 1024),
})

describe('Loop', () => {
  describe('invariant I2 (per-key serialization)', () => {
    it('never runs two messages of one key at once, and starts equal-priority messages of a key in post order', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(setupArb, fc.array(commandArb, { minLength: 1, maxLength: 50, size: 'medium' }), run),
        { numRuns: 200 },
      )
    })
  })
})

async function run(setup: ValueOf<typeof setupArb>, commands: readonly Command[]): Promise<void> {
  const clock = new VirtualClock()
  const loop = createLoop<Jobs>({ ...setup, capacity: 10_000, clock })
  const recorder = new Recorder(loop)
  const violations: string[] = []
  // Keys inside a handler right now (the handler's own view, independent of the loop's events).
  const inside = new Set<MessageKey>()
  // Reference model: per key, the seqs posted at each priority, in post order; and how many started.
  const posted = new Map<string, number[]>()
  const startedCount = new Map<string, number>()
  let workers = setup.workers

  loop.on('job', (msg: JobMessage) => {
    const key = msg.key
    if (key !== undefined) {
      if (inside.has(key)) violations.push(`${show(msg)} entered while key ${key} was running`)
      inside.add(key)
      const lane = `${key}/${msg.priority}`
      const n = startedCount.get(lane) ?? 0
      const expected = posted.get(lane)?.[n]
      if (expected !== msg.seq)
        violations.push(`${show(msg)} started as #${n} of ${lane}; post order says #${expected}`)
      startedCount.set(lane, n + 1)
    }
    return runJob(clock, msg.payload, () => {
      if (key !== undefined) inside.delete(key)
    })
  })
  // Worker bound under resize: a start never exceeds the configured worker count.
  loop.events.on('started', (m) => {
    if (loop.running > workers) violations.push(`${show(m)} started with ${loop.running} running > ${workers} workers`)
  })

  const post = (spec: PostSpec, tag: number): void => {
    const m = loop.post('job', { latency: spec.latency, failure: spec.failure, followUp: false, tag }, optionsOf(spec))
    if (m.key === undefined) return
    const lane = `${m.key}/${m.priority}`
    const seqs = posted.get(lane)
    if (seqs === undefined) posted.set(lane, [m.seq])
    else seqs.push(m.seq)
  }

  for (const [i, c] of commands.entries()) {
    switch (c.kind) {
      case 'post':
        post(c.spec, i)
        break
      case 'burst':
        for (const spec of c.specs) post(spec, i)
        break
      case 'advance':
        await clock.advance(c.ms)
        break
      case 'resize':
        workers = c.workers
        loop.resize(c.workers)
        break
      case 'pause':
        loop.pause()
        break
      case 'resume':
        loop.resume()
        break
    }
    await flush()
  }
  loop.start()
  await clock.run()
  await loop.drain()

  expect(violations).toEqual([])
  expect(recorder.violations).toEqual([])
  // Every message started exactly once (nothing stuck behind a key).
  expect(recorder.waiting.size).toBe(0)
  expect(loop.metrics().gauges).toMatchObject({ queued: 0, running: 0, busyKeys: 0, parked: 0 })
  for (const [lane, seqs] of posted) expect(startedCount.get(lane), lane).toBe(seqs.length)
}
