/**
 * A message that called `ctx.commit()` and then failed: its accepted retry is never shed by an
 * overflow policy, and a stop that cancels it keeps its key `committed`, so a redelivery is a duplicate.
 */
import { describe, expect, it } from 'vitest'
import { createLoop, type DuplicateMessageError, MemoryIdempotencyStore, VirtualClock } from '../src/index.js'
import { ended, type Messages, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('a committed message that will not run again', () => {
    // A loop whose handler commits, then fails once: the message backs off with its key committed.
    function committingLoop(options: Parameters<typeof virtualLoop>[0]) {
      const { clock, loop } = virtualLoop({
        workers: 1,
        capacity: 2,
        overflow: 'drop-oldest-lowest',
        retry: { maxAttempts: 3, baseMs: 10, jitter: 0, unknownMaxAttempts: 3 },
        ...options,
      })
      const effects: number[] = []
      loop.on('work', (m, ctx) => {
        if (m.payload !== 0) return
        if (ctx.committed === undefined) {
          effects.push(m.payload) // the side effect, then its commit point
          ctx.commit()
          throw new Error('failed after its side effect')
        }
      })
      return { clock, loop, effects }
    }

    it('is never evicted by drop-oldest-lowest after its back-off (an accepted retry is never shed)', async () => {
      const { clock, loop, effects } = committingLoop({})
      const dropped: number[] = []
      loop.events.on('dropped', (m) => dropped.push(m.payload as number))
      loop.post('work', 0, { idempotencyKey: 'pay-1', priority: 9 })
      await clock.advance(1) // attempt 1 committed and failed: backing off for 10 ms
      loop.pause()
      await clock.advance(20) // back in the queue
      for (let i = 1; i <= 3; i++) loop.post('work', i, { priority: 9 }) // a flood at the same level
      loop.resume()
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(dropped).not.toContain(0)
      expect(effects).toEqual([0])
      const c = loop.metrics().counters
      expect(c.succeeded).toBeGreaterThanOrEqual(1)
      expect(ended(c)).toBe(c.accepted)
    })

    it('keeps its key committed when a stop without drain cancels it, so a redelivery is a duplicate', async () => {
      const clock = new VirtualClock()
      const store = new MemoryIdempotencyStore(100, clock)
      const { loop, effects } = committingLoop({ clock, idempotency: { store } })
      loop.post('work', 0, { idempotencyKey: 'pay-2' })
      await clock.advance(1) // committed, failed, backing off
      const stopped = loop.stop({ drain: false })
      await clock.run()
      await stopped
      expect(loop.metrics().counters.cancelled).toBe(1)
      const next = createLoop<Messages>({ clock, logger: false, idempotency: { store } })
      next.on('work', () => {})
      const again = next.tryPost('work', 0, { idempotencyKey: 'pay-2' })
      expect(again).toMatchObject({ ok: false, status: 'duplicate' })
      expect((again as unknown as { error: DuplicateMessageError }).error.ledgerState).toBe('committed')
      expect(effects).toEqual([0])
      await next.stop()
    })
  })
})
