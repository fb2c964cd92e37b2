/**
 * Sizes that must not reach a recursion or argument limit: a snapshot message with 200k attempt
 * records, 200k messages parked behind one busy key.
 */
import { describe, expect, it } from 'vitest'
import { ended, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('long histories and hot keys', () => {
    it('restores a snapshot whose message has 200k attempts, all or nothing, without a RangeError', async () => {
      const { loop: first } = virtualLoop({ autoStart: false })
      first.on('work', () => {})
      first.post('work', 1)
      first.post('work', 2)
      const snapshot = await first.stop({ deadlineMs: 0 })
      const info = { name: 'Error', message: 'x', signature: 'Error: x', errorClass: 'unknown' } as const
      const attempts = Array.from({ length: 200_000 }, (_, i) => ({
        attempt: i + 1,
        startedAt: 0,
        durationMs: 1,
        outcome: 'failed' as const,
        error: info,
      }))
      const huge = {
        ...snapshot,
        messages: snapshot.messages.map((m, i) => (i === 1 ? { ...m, attempts } : m)),
      }
      const { clock, loop } = virtualLoop({ retry: { maxAttempts: 1 } })
      loop.on('work', () => {})
      expect(loop.restore(huge)).toBe(2)
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(loop.metrics().counters).toMatchObject({ restored: 2, succeeded: 2 })
    })

    it('cancels 200k messages parked behind one busy key at a stop without drain', async () => {
      const { clock, loop } = virtualLoop({ workers: 2, capacity: 300_000 })
      let release = (): void => {}
      loop.on('work', (m) => (m.payload === 0 ? new Promise<void>((r) => (release = r)) : undefined))
      for (let i = 0; i < 200_001; i++) loop.post('work', i, { key: 'hot' })
      await clock.advance(0) // the first runs; the second worker parks the rest behind it
      expect(loop.metrics().gauges.parked).toBe(200_000)
      const stopped = loop.stop({ drain: false })
      release()
      await clock.run()
      await stopped
      const c = loop.metrics().counters
      expect(c).toMatchObject({ cancelled: 200_000, succeeded: 1 })
      expect(ended(c)).toBe(c.accepted)
    })
  })
})
