import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('metrics()', () => {
    it('reports queue wait per priority and handler time on virtual time', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, agingMs: Number.POSITIVE_INFINITY })
      loop.on('work', async () => {
        await clock.sleep(10)
      })
      loop.post('work', 1, { priority: 9 })
      loop.post('work', 2, { priority: 0 })
      loop.post('work', 3, { priority: 9 })
      await clock.run()
      const snapshot = loop.metrics()
      expect(snapshot.handlerTime).toMatchObject({ count: 3, mean: 10, max: 10 })
      expect(snapshot.queueWaitByPriority[0]).toMatchObject({ count: 1, max: 0 }) // posted second, ran first
      expect(snapshot.queueWaitByPriority[9]).toMatchObject({ count: 2, max: 20 })
      expect(snapshot.queueWait).toMatchObject({ count: 3, max: 20, mean: 10 })
      expect(snapshot.gauges).toMatchObject({ queued: 0, running: 0, fill: 0, parked: 0 })
    })

    it('keeps the gauges live while work waits', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, capacity: 4 })
      loop.on('work', async () => {
        await clock.sleep(1)
      })
      loop.post('work', 1, { key: 'a' })
      loop.post('work', 2, { key: 'a' })
      loop.post('work', 3, { key: 'b' })
      await clock.advance(0)
      expect(loop.metrics().gauges).toMatchObject({ queued: 2, running: 1, fill: 0.5, busyKeys: 1, capacity: 4 })
      expect(JSON.parse(JSON.stringify(loop.metrics())).counters.accepted).toBe(3)
      await clock.run()
    })
  })
})
