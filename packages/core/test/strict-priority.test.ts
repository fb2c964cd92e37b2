/**
 * `agingMs: Infinity` is strict priority: the same start order under `queue: 'levels'` and `'heap'`,
 * a keyless retry re-entering behind the messages that arrived meanwhile.
 */
import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('agingMs: Infinity', () => {
    // The order every message starts in, for a mix of priorities and an unordered keyless retry.
    async function startOrder(queue: 'levels' | 'heap'): Promise<string[]> {
      const { clock, loop } = virtualLoop({
        workers: 1,
        queue,
        agingMs: Number.POSITIVE_INFINITY,
        retry: { maxAttempts: 2, baseMs: 5, jitter: 0 },
      })
      const order: string[] = []
      let failedOnce = false
      loop.on('work', (m) => {
        order.push(`${m.payload}@${m.priority}`)
        if (m.payload === 0 && !failedOnce) {
          failedOnce = true
          throw new Error('transient')
        }
      })
      loop.post('work', 0, { priority: 3 }) // fails once, retried after 5 ms
      await clock.advance(1)
      for (let i = 1; i <= 6; i++) loop.post('work', i, { priority: i % 2 === 0 ? 3 : 5 })
      loop.pause()
      await clock.advance(10) // the retry is back in the queue, behind what arrived meanwhile
      loop.resume()
      const drained = loop.drain()
      await clock.run()
      await drained
      return order
    }

    it('gives the same order with levels and heap, a keyless retry behind newer messages', async () => {
      const levels = await startOrder('levels')
      const heap = await startOrder('heap')
      expect(heap).toEqual(levels)
      expect(levels).toEqual(['0@3', '2@3', '4@3', '6@3', '0@3', '1@5', '3@5', '5@5'])
    })
  })
})
