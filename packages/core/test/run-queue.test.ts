import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PriorityLevel } from '../src/contracts/priority.js'
import { Envelope, Where } from '../src/internal/envelope.js'
import { HeapReadyQueue } from '../src/queue/heap-ready-queue.js'
import { KeyGroups } from '../src/queue/key-groups.js'
import { LevelQueue } from '../src/queue/level-queue.js'
import { RunQueue } from '../src/queue/run-queue.js'
import { StartFilters } from '../src/queue/start-filters.js'
import { Urgency } from '../src/queue/urgency.js'

/** One step against the queue: a post, a take, the end of a running message, a cancel of a waiting one. */
type Step =
  | { readonly op: 'push'; readonly key: number | undefined; readonly priority: number; readonly dt: number }
  | { readonly op: 'take' }
  | { readonly op: 'end'; readonly pick: number }
  | { readonly op: 'cancel'; readonly pick: number }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('push' as const),
      key: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined, freq: 5 }),
      priority: fc.integer({ min: 0, max: 4 }),
      dt: fc.integer({ min: 0, max: 30 }),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ op: 'take' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('end' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
)

/**
 * The reference: the most urgent waiting message whose key no running message holds (I2, I3) — a
 * scan of a plain array, no lanes, no heaps.
 */
class Model {
  readonly waiting: Envelope[] = []
  readonly running: Envelope[] = []
  constructor(readonly urgency: Urgency) {}

  take(): Envelope | undefined {
    const busy = new Set(this.running.map((m) => m.key))
    let best: Envelope | undefined
    for (const m of this.waiting) {
      if (m.key !== undefined && busy.has(m.key)) continue
      if (best === undefined || this.urgency.compare(m, best) < 0) best = m
    }
    if (best !== undefined) {
      this.waiting.splice(this.waiting.indexOf(best), 1)
      this.running.push(best)
    }
    return best
  }
}

function run(steps: readonly Step[], agingMs: number, heap: boolean): void {
  const urgency = new Urgency(agingMs)
  const queue = new RunQueue(heap ? new HeapReadyQueue(urgency) : new LevelQueue(urgency), urgency)
  const model = new Model(urgency)
  let seq = 0
  let now = 0
  for (const step of steps) {
    if (step.op === 'push') {
      now += step.dt
      const m = new Envelope('t', ++seq, 'job', seq, step.key, step.priority as PriorityLevel, now, undefined)
      queue.push(m)
      model.waiting.push(m)
    } else if (step.op === 'take') {
      const expected = model.take()
      expect(queue.take()?.seq).toBe(expected?.seq)
    } else if (step.op === 'end' && model.running.length > 0) {
      const [m] = model.running.splice(step.pick % model.running.length, 1) as [Envelope]
      m.where = Where.Done
      if (m.key !== undefined) queue.release(m.key)
    } else if (step.op === 'cancel' && model.waiting.length > 0) {
      const [m] = model.waiting.splice(step.pick % model.waiting.length, 1) as [Envelope]
      expect(queue.remove(m)).toBe(true)
      m.where = Where.Done // its outcome
    }
    expect(queue.length).toBe(model.waiting.length)
    expect(queue.busyKeys).toBe(new Set(model.running.flatMap((m) => (m.key === undefined ? [] : [m.key]))).size)
  }
}

describe('RunQueue against a reference model', () => {
  it('takes what the model takes — the most urgent message whose key is free — under any posts, takes, ends and cancels', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { maxLength: 120 }),
        fc.constantFrom(0, 10, 1_000, Number.POSITIVE_INFINITY),
        fc.boolean(),
        (steps, agingMs, heap) => run(steps, agingMs, heap),
      ),
      { numRuns: 1_000 },
    )
  })

  it('parks a busy key’s messages and frees the lane head first when the key is released', () => {
    const urgency = new Urgency(Number.POSITIVE_INFINITY)
    const queue = new RunQueue(new LevelQueue(urgency), urgency)
    const post = (seq: number, key: string | undefined, priority: number) => {
      const m = new Envelope('t', seq, 'job', seq, key, priority as PriorityLevel, 0, undefined)
      queue.push(m)
      return m
    }
    post(1, 'a', 2)
    post(2, 'a', 0) // more urgent, same key: waits for the first
    post(3, undefined, 4)
    expect(queue.take()?.seq).toBe(2) // the most urgent runnable
    expect(queue.take()?.seq).toBe(3) // 1 is parked behind 2
    expect(queue.parked).toBe(1)
    expect(queue.take()).toBeUndefined()
    queue.release('a')
    expect(queue.take()?.seq).toBe(1)
  })

  it('moves a lane on when the head its key’s release unparked is cancelled before it starts', () => {
    const urgency = new Urgency(Number.POSITIVE_INFINITY)
    const queue = new RunQueue(new LevelQueue(urgency), urgency)
    const post = (seq: number) => {
      const m = new Envelope('t', seq, 'job', seq, 'k', 2 as PriorityLevel, 0, undefined)
      queue.push(m)
      return m
    }
    post(1)
    const second = post(2)
    post(3)
    expect(queue.take()?.seq).toBe(1)
    expect(queue.take()).toBeUndefined() // 2 and 3 park behind 1
    queue.release('k') // 2 is unparked
    expect(queue.remove(second)).toBe(true)
    second.where = Where.Done // its outcome
    expect(queue.take()?.seq).toBe(3)
  })
})

describe('RunQueue filters', () => {
  const envelope = (seq: number, key: string) =>
    new Envelope('t', seq, 'job', seq, key, 2 as PriorityLevel, 0, undefined)

  it('holds a message its start filter keeps, with its place and key, until resumed', () => {
    const urgency = new Urgency(Number.POSITIVE_INFINITY)
    const starts = new StartFilters()
    const queue = new RunQueue(new LevelQueue(urgency), urgency, { starts })
    const first = envelope(1, 'k')
    starts.set('breaker', (m) => {
      if (m !== first || m.where === Where.Unparked) return false
      queue.markHeld(m)
      return true
    })
    queue.push(first)
    queue.push(envelope(2, 'k'))
    expect(queue.take()).toBeUndefined() // 1 held, 2 parked behind its key
    expect([queue.length, queue.held, queue.parked]).toEqual([2, 1, 1])
    queue.resume(first)
    expect(queue.take()?.seq).toBe(1) // it kept its key: 2 still waits
    expect(queue.take()).toBeUndefined()
    queue.release('k')
    expect(queue.take()?.seq).toBe(2)
  })

  it('lets at most its concurrency of a key group start, the rest wait in the group with their keys', () => {
    const urgency = new Urgency(Number.POSITIVE_INFINITY)
    const groups = new KeyGroups({ of: () => 'g', limit: () => 1 }, urgency.compare)
    const queue = new RunQueue(new LevelQueue(urgency), urgency, { groups })
    queue.push(envelope(1, 'a'))
    queue.push(envelope(2, 'b'))
    const started = queue.take() as Envelope
    expect(started.seq).toBe(1)
    expect(queue.take()).toBeUndefined() // 2 waits for the group's slot
    expect(queue.length).toBe(1)
    queue.attemptEnded(started)
    queue.release('a')
    expect(queue.take()?.seq).toBe(2)
  })
})
