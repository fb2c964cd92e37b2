/**
 * Dead letters and attempt records carry wall-clock (epoch) times beside the clock's readings, from
 * `Clock.wallNow`.
 */
import { describe, expect, it } from 'vitest'
import { createLoop, NonRetryableError, VirtualClock } from '../src/index.js'
import type { Messages } from './fixtures.js'

describe('Loop', () => {
  describe('wall-clock timestamps', () => {
    it('dead letters and attempt records carry epoch times beside the monotonic readings', async () => {
      const clock = new VirtualClock(0, Date.UTC(2026, 11, 1))
      const loop = createLoop<Messages>({ clock, logger: false })
      loop.on('work', () => {
        throw new NonRetryableError('declined')
      })
      loop.post('work', 1)
      await clock.advance(250)
      const drained = loop.drain()
      await clock.run()
      await drained
      const [letter] = loop.deadLetters.list()
      expect(letter?.atEpochMs).toBe(Date.UTC(2026, 11, 1) + (letter?.at ?? Number.NaN))
      expect(letter?.attempts[0]?.startedAtEpochMs).toBe(Date.UTC(2026, 11, 1) + (letter?.attempts[0]?.startedAt ?? 0))
      expect(new Date(letter?.atEpochMs ?? 0).toISOString()).toMatch(/^2026-12-01T/)
    })
  })
})
