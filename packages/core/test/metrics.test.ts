import { describe, expect, it } from 'vitest'
import { createLoop, type PriorityLevel, VirtualClock } from '../src/index.js'
import { type Messages, virtualLoop } from './fixtures.js'

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

    it('returns a copy that later work leaves as it was, with the gauges in their documented order', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      loop.on('work', async () => {
        await clock.sleep(5)
      })
      loop.post('work', 1, { priority: 3 })
      await clock.run()
      const first = loop.metrics()
      const copy = structuredClone(first)
      for (let i = 0; i < 20; i++) loop.post('work', i, { priority: (i % 10) as PriorityLevel })
      await clock.advance(7)
      const second = loop.metrics()
      await clock.run()
      expect(first).toEqual(copy)
      expect(second.queueWait.count).toBeGreaterThan(first.queueWait.count)
      expect(second.queueWaitByPriority[3]).not.toBe(first.queueWaitByPriority[3])
      expect(Object.keys(first.gauges)).toEqual([
        'queued',
        'capacity',
        'running',
        'waitingProducers',
        'parked',
        'workers',
        'busyKeys',
        'pressure',
        'zombies',
        'delayed',
        'overdue',
        'retrying',
        'held',
        'deadLetters',
        'fill',
        'limited',
        'grouped',
        'gateClosed',
      ])
    })
  })
})

describe('Loop', () => {
  describe('timestamps', () => {
    // A clock the test moves synchronously, as producer and handler code move real time.
    function steppedClock() {
      const real = new VirtualClock()
      let t = 0
      const clock = {
        now: () => t,
        setTimeout: (fn: () => void, ms: number) => real.setTimeout(fn, ms),
        clearTimeout: (h: unknown) => real.clearTimeout(h),
        setImmediate: (fn: () => void) => real.setImmediate(fn),
      }
      return { clock, real, step: (ms: number) => (t += ms) }
    }

    // The clock decision of performance II: the posts of one synchronous run share a reading, read
    // again every 64 posts and as soon as the run ends. A producer that works between two posts of one
    // synchronous run is therefore stamped to within that run (the tolerance the guides state); across
    // an await — any turn of the event loop — the stamp is exact, and so is aging.
    it('stamps each post with the exact time once the synchronous run that posted before it ended (aging stays exact)', async () => {
      const { clock, real, step } = steppedClock()
      const loop = createLoop<Messages>({ clock, workers: 1, agingMs: 10, autoStart: false })
      const order: number[] = []
      loop.on('work', (m) => {
        order.push(m.payload)
      })
      const a = loop.post('work', 1, { priority: 9 })
      step(100) // the producer works for 100 ms between two posts
      await Promise.resolve()
      const b = loop.post('work', 2, { priority: 0 })
      expect(b.postedAt - a.postedAt).toBe(100)
      loop.start()
      await real.run()
      expect(order).toEqual([1, 2]) // posted 100 ms ≥ 10 × 9 later: it may not overtake
    })

    it('shares one reading among at most 64 posts of one synchronous run', async () => {
      const { clock, real, step } = steppedClock()
      const loop = createLoop<Messages>({ clock, workers: 1, autoStart: false, capacity: 200 })
      loop.on('work', () => {})
      const stamps: number[] = []
      for (let i = 0; i < 130; i++) {
        stamps.push(loop.post('work', i).postedAt)
        step(1) // 1 ms of producer work after each post
      }
      expect(stamps.slice(0, 64)).toEqual(Array(64).fill(0))
      expect(stamps.slice(64, 128)).toEqual(Array(64).fill(64))
      expect(stamps.slice(128)).toEqual([128, 128])
      loop.start()
      await real.run()
    })

    it('measures synchronous handlers and the waits behind them exactly', async () => {
      const { clock, real, step } = steppedClock()
      const loop = createLoop<Messages>({ clock, workers: 1 })
      loop.on('work', () => {
        step(20)
      })
      for (let i = 0; i < 5; i++) loop.post('work', i)
      await real.run()
      const { handlerTime, queueWait } = loop.metrics()
      expect(handlerTime).toMatchObject({ count: 5, mean: 20, max: 20 })
      expect(queueWait).toMatchObject({ count: 5, mean: 40, max: 80 })
    })
  })
})
