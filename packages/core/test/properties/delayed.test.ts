/**
 * BRIEF I5 (never early) and I1 (nothing lost) for delayed messages, end to end through the loop's
 * timing wheel on virtual time: random schedules, cancels, immediate posts, full queues under every
 * overflow policy, and stops.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, type DelayedMessage, type OverflowPolicy, VirtualClock } from '../../src/index.js'

interface Jobs {
  job: { id: number; dueAt: number }
}

type Step =
  | { kind: 'delay'; ms: number; priority: number }
  | { kind: 'post'; priority: number }
  | { kind: 'cancel'; index: number }
  | { kind: 'advance'; ms: number }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('delay' as const),
      ms: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 500, noNaN: true }), fc.integer({ min: 0, max: 100_000 })),
      priority: fc.integer({ min: 0, max: 9 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('post' as const), priority: fc.integer({ min: 0, max: 9 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.double({ min: 0, max: 50, noNaN: true }), fc.integer({ min: 0, max: 200_000 })),
    }),
  },
)

const setupArb = fc.record({
  capacity: fc.integer({ min: 1, max: 6 }),
  workers: fc.integer({ min: 1, max: 3 }),
  overflow: fc.constantFrom<OverflowPolicy>('reject', 'drop-new', 'drop-oldest-lowest', 'wait'),
  latency: fc.integer({ min: 0, max: 30 }),
  stopDrain: fc.boolean(),
})

describe('Loop', () => {
  describe('invariants I5 and I1 for delayed messages', () => {
    it('never starts a delayed message before it is due, and gives every accepted message exactly one outcome', async () => {
      await fc.assert(
        fc.asyncProperty(setupArb, fc.array(stepArb, { maxLength: 40 }), async (setup, steps) => {
          const clock = new VirtualClock()
          const loop = createLoop<Jobs>({
            clock,
            capacity: setup.capacity,
            workers: setup.workers,
            overflow: setup.overflow,
          })
          const outcomes = new Map<number, string[]>()
          const note = (id: number, what: string) => outcomes.set(id, [...(outcomes.get(id) ?? []), what])
          loop.on('job', async (m) => {
            expect(clock.now()).toBeGreaterThanOrEqual(m.payload.dueAt) // I5: never early
            if (setup.latency > 0) await clock.sleep(setup.latency)
          })
          loop.events.on('succeeded', (m) => note((m.payload as Jobs['job']).id, 'succeeded'))
          loop.events.on('dropped', (m) => note((m.payload as Jobs['job']).id, 'dropped'))
          loop.events.on('cancelled', (m) => note((m.payload as Jobs['job']).id, 'cancelled'))
          const started = new Set<number>()
          loop.events.on('started', (m) => started.add((m.payload as Jobs['job']).id))
          const handles: DelayedMessage<Jobs, 'job'>[] = []
          const accepted = new Set<number>()
          let next = 0
          for (const step of steps) {
            const id = next++
            if (step.kind === 'delay') {
              const priority = step.priority as 0
              handles.push(loop.postDelayed('job', { id, dueAt: clock.now() + step.ms }, step.ms, { priority }))
              accepted.add(id)
            } else if (step.kind === 'post') {
              const result = loop.tryPost('job', { id, dueAt: 0 }, { priority: step.priority as 0 })
              if (result.ok || result.status === 'dropped') accepted.add(id)
            } else if (step.kind === 'cancel' && handles.length > 0) {
              const handle = handles[step.index % handles.length] as DelayedMessage<Jobs, 'job'>
              // A handle cancels its message until it starts (due and queued too), never after.
              const { id: target } = handle.message.payload
              const untouched = !started.has(target) && (outcomes.get(target) ?? []).length === 0
              expect(handle.cancel()).toBe(untouched)
            } else if (step.kind === 'advance') {
              await clock.advance(step.ms)
            }
            expect(loop.metrics().gauges.queued).toBeLessThanOrEqual(setup.capacity) // I4
          }
          const stopped = loop.stop({ drain: setup.stopDrain })
          await clock.run()
          await stopped
          for (const id of accepted) expect(outcomes.get(id)?.length, `message ${id}`).toBe(1)
          for (const id of outcomes.keys()) expect(accepted.has(id)).toBe(true)
          const c = loop.metrics().counters
          expect(c.posted).toBe(c.accepted + c.rejected)
          expect(c.accepted).toBe(c.succeeded + c.failed + c.dropped + c.cancelled)
          expect(loop.metrics().gauges).toMatchObject({ delayed: 0, overdue: 0, queued: 0 })
          expect(clock.pending).toBe(0)
        }),
        { numRuns: 200 },
      )
    })
  })
})
