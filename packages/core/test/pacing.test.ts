import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('desiredSize and ready', () => {
    it('tell a pacing producer how much room is left, and wake it with one shared promise', async () => {
      const { clock, loop } = virtualLoop({ capacity: 3, workers: 1, autoStart: false })
      loop.on('work', async () => {
        await clock.sleep(10)
      })
      expect(loop.desiredSize).toBe(3)
      await loop.ready // resolved at once while there is room
      for (let i = 0; i < 3; i++) loop.post('work', i)
      expect(loop.desiredSize).toBe(0)
      const a = loop.ready
      const b = loop.ready
      expect(a).toBe(b) // one promise per congested period, whatever the number of producers
      let woke = -1
      void a.then(() => {
        woke = clock.now()
      })
      loop.start()
      await clock.advance(0)
      expect(woke).toBe(0) // the first start freed a slot
      expect(loop.desiredSize).toBe(1)
      await clock.run()
      expect(loop.desiredSize).toBe(3)
    })

    it('resolves when the loop stops, so paced producers do not hang', async () => {
      const { clock, loop } = virtualLoop({ capacity: 1, autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 1)
      const ready = loop.ready
      const stopped = loop.stop({ drain: false })
      await ready
      await clock.run()
      await stopped
    })

    it('lets a producer loop pace itself without ever hitting QueueFullError', async () => {
      const { clock, loop } = virtualLoop({ capacity: 4, workers: 2 })
      let done = 0
      loop.on('work', async () => {
        await clock.sleep(1)
        done++
      })
      const producer = (async () => {
        for (let i = 0; i < 50; i++) {
          await loop.ready
          loop.post('work', i)
        }
      })()
      const drive = clock.run()
      await producer
      await drive
      await clock.run()
      expect(done).toBe(50)
      expect(loop.metrics().counters.rejected).toBe(0)
    })
  })
})
