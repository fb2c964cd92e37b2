/**
 * When a delayed message enters the queue: `postAt()` with a time in the past is due at once, and a
 * message that comes due while the queue is full waits outside it, then enters in due order, its queue
 * wait starting when it enters.
 */
import { describe, expect, it } from 'vitest'
import { ended, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('postAt() with a time in the past', () => {
    it('runs the message at once, whatever the past time, and frees its idempotency key', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      await clock.advance(1_000)
      const ran: number[] = []
      loop.on('work', (m) => {
        ran.push(m.payload)
      })
      const times = [999, 0, -1, -1e9, -Number.MAX_SAFE_INTEGER]
      const handles = times.map((at, i) => loop.postAt('work', i, at, { idempotencyKey: `k${i}` }))
      for (const h of handles) expect(h.dueAt).toBe(1_000)
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(ran).toEqual([0, 1, 2, 3, 4])
      const c = loop.metrics().counters
      expect(c).toMatchObject({ accepted: 5, succeeded: 5 })
      expect(ended(c)).toBe(c.accepted)
      // The keys were released as done: a second post of one is a duplicate, not a key held forever.
      expect(loop.tryPost('work', 9, { idempotencyKey: 'k2' })).toMatchObject({ ok: false, status: 'duplicate' })
      expect(loop.sideTableSize).toBe(0)
    })
  })

  describe('a delayed message that comes due while the queue is full', () => {
    for (const queue of ['levels', 'heap'] as const) {
      it(`starts its queue wait when it enters, and runs in due order (${queue})`, async () => {
        const { clock, loop } = virtualLoop({ workers: 1, capacity: 1, queue, overflow: 'reject' })
        const order: number[] = []
        let release = (): void => {}
        loop.on('work', (m) => {
          order.push(m.payload)
          return m.payload === 0 ? new Promise<void>((r) => (release = r)) : undefined
        })
        loop.post('work', 0) // runs and blocks the only worker
        await clock.advance(0)
        loop.post('work', 1) // fills the queue
        const late = loop.postDelayed('work', 3, 20) // scheduled first, due later
        const early = loop.postDelayed('work', 2, 10)
        await clock.advance(50) // both due, no room: they wait outside the queue
        release()
        const drained = loop.drain()
        await clock.run()
        await drained
        expect(order).toEqual([0, 1, 2, 3])
        expect(early.message.postedAt).toBeGreaterThanOrEqual(early.dueAt)
        expect(late.message.postedAt).toBeGreaterThanOrEqual(late.dueAt)
      })
    }
  })
})
