import type { DeadlineScheduler } from '@flowing/watchdog'
import { describe, expect, it } from 'vitest'
import type { PriorityLevel } from '../src/contracts/priority.js'
import { Retries } from '../src/failure/retries.js'
import { Envelope, Where } from '../src/internal/envelope.js'
import { LevelQueue } from '../src/queue/level-queue.js'
import { RunQueue } from '../src/queue/run-queue.js'
import { Urgency } from '../src/queue/urgency.js'

/** A wheel that fires only when told: the due items in deadline order. */
class FakeWheel implements DeadlineScheduler<Envelope> {
  readonly #items = new Map<number, { deadline: number; item: Envelope }>()
  #id = 0
  add(deadline: number, item: Envelope): number {
    this.#items.set(++this.#id, { deadline, item })
    return this.#id
  }
  remove(id: number): boolean {
    return this.#items.delete(id)
  }
  /** Removes and returns what is due at `now`. */
  due(now: number): Envelope[] {
    const out = [...this.#items].filter(([, e]) => e.deadline <= now).sort((a, b) => a[1].deadline - b[1].deadline)
    for (const [id] of out) this.#items.delete(id)
    return out.map(([, e]) => e.item)
  }
}

let seq = 0
const envelope = (key?: string, priority: PriorityLevel = 4): Envelope =>
  new Envelope('t', ++seq, 'job', seq, key, priority, 0, undefined)

/** A run queue, a fake wheel, retries on them, and what the ports were told. */
function rig(ordered = true) {
  const urgency = new Urgency(1000)
  const queue = new RunQueue(new LevelQueue(urgency), urgency)
  const wheel = new FakeWheel()
  const told: string[] = []
  let now = 0
  const retries = new Retries(wheel, queue, {
    ordered: (m) => ordered && m.key !== undefined,
    requeued: (m, at) => told.push(`requeued ${m.seq} at ${at}`),
    pump: () => told.push('pump'),
    now: () => now,
  })
  const fire = (at: number) => {
    now = at
    for (const m of wheel.due(at)) retries.due(m)
  }
  return { queue, retries, told, fire }
}

/** `m` as it would be after a failed attempt: taken from the queue, so its key is busy. */
function running(queue: RunQueue, m: Envelope): void {
  queue.push(m)
  expect(queue.take()).toBe(m)
}

describe('Retries', () => {
  describe('backOff()', () => {
    it('keeps a queue place and, ordered, the key: the key’s later messages wait behind the retry', () => {
      const { queue, retries, told, fire } = rig()
      const failed = envelope('k')
      running(queue, failed)
      retries.backOff(failed, 100)
      const later = envelope('k')
      queue.push(later)
      expect([queue.length, queue.away, retries.size, failed.where]).toEqual([2, 1, 1, Where.Backoff])
      expect(queue.take()).toBeUndefined() // `later` parks: its key is kept for the retry
      fire(99)
      expect(told).toEqual([])
      fire(100)
      expect(told).toEqual(['requeued 1 at 100', 'pump'])
      expect([queue.away, retries.size]).toEqual([0, 0])
      expect(queue.take()).toBe(failed) // the retry first, then the key's later message
    })

    it('lets the key go for an unordered retry, which re-enters behind what arrived meanwhile', () => {
      const { queue, retries, fire } = rig(false)
      const failed = envelope('k')
      running(queue, failed)
      retries.backOff(failed, 50)
      const later = envelope('k')
      queue.push(later)
      expect(queue.take()).toBe(later) // the key is free
      queue.release('k')
      fire(50)
      expect(failed.postedAt).toBe(50)
      expect(queue.take()).toBe(failed)
    })
  })

  describe('remove()', () => {
    it('cancels a waiting retry with its place and key, and never re-enters it', () => {
      const { queue, retries, told, fire } = rig()
      const failed = envelope('k')
      running(queue, failed)
      retries.backOff(failed, 100)
      const later = envelope('k')
      queue.push(later)
      expect(retries.remove(failed)).toBe(true)
      expect(retries.remove(failed)).toBe(false)
      expect([queue.away, retries.size]).toEqual([0, 0])
      expect(queue.take()).toBe(later) // the key moved on
      fire(1_000)
      expect(told).toEqual([])
    })
  })

  describe('restored()', () => {
    it('claims the key of a restored ordered retry and keeps its place', () => {
      const { queue, retries, fire } = rig()
      const restored = envelope('k')
      retries.restored(restored, 30)
      const fresh = envelope('k')
      queue.push(fresh)
      expect(queue.take()).toBeUndefined()
      fire(30)
      expect(queue.take()).toBe(restored)
    })
  })

  describe('takeAll()', () => {
    it('hands every retry over with its due time, freeing places and keys', () => {
      const { queue, retries } = rig()
      const a = envelope('a')
      const b = envelope()
      running(queue, a)
      running(queue, b)
      retries.backOff(a, 10)
      retries.backOff(b, 20)
      expect(retries.find(a.seq)).toBe(a)
      const taken = retries.takeAll()
      expect(taken.map((h) => [h.m.seq, h.state, h.dueAt])).toEqual([
        [a.seq, 'retry-scheduled', 10],
        [b.seq, 'retry-scheduled', 20],
      ])
      expect([queue.away, queue.busyKeys, retries.size, retries.find(a.seq)]).toEqual([0, 0, 0, undefined])
    })
  })
})
