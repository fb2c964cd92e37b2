import { describe, expect, it } from 'vitest'
import { createLoop, InvalidArgumentError } from '../src/index.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('worker pool', () => {
    it('runs at most `workers` handlers at once', async () => {
      const { clock, loop } = virtualLoop({ workers: 3 })
      let running = 0
      let peak = 0
      loop.on('work', async () => {
        peak = Math.max(peak, ++running)
        await clock.sleep(10)
        running--
      })
      for (let i = 0; i < 20; i++) loop.post('work', i)
      await clock.run()
      expect(peak).toBe(3)
      expect(clock.now()).toBe(70) // ceil(20 / 3) rounds of 10 ms
    })

    it('never runs two messages of one key at once, and keeps their post order', async () => {
      const { clock, loop } = virtualLoop({ workers: 4 })
      const starts: string[] = []
      const busy = new Set<string>()
      loop.on('order.paid', async (m) => {
        expect(busy.has(m.payload.orderId)).toBe(false)
        busy.add(m.payload.orderId)
        starts.push(`${m.payload.orderId}#${m.payload.amount}`)
        await clock.sleep(m.payload.amount % 3)
        busy.delete(m.payload.orderId)
      })
      for (let i = 0; i < 12; i++) {
        const orderId = `o-${i % 2}`
        loop.post('order.paid', { orderId, amount: i }, { key: orderId })
      }
      await clock.run()
      expect(starts.filter((s) => s.startsWith('o-0'))).toEqual(['o-0#0', 'o-0#2', 'o-0#4', 'o-0#6', 'o-0#8', 'o-0#10'])
      expect(starts.filter((s) => s.startsWith('o-1'))).toEqual(['o-1#1', 'o-1#3', 'o-1#5', 'o-1#7', 'o-1#9', 'o-1#11'])
    })

    it('is work-conserving: a slow key never idles a worker while other keys wait', async () => {
      const { clock, loop } = virtualLoop({ workers: 2 })
      const finished: string[] = []
      loop.on('order.paid', async (m) => {
        await clock.sleep(m.payload.orderId === 'slow' ? 100 : 1)
        finished.push(`${m.payload.orderId}@${clock.now()}`)
      })
      loop.post('order.paid', { orderId: 'slow', amount: 1 }, { key: 'slow' })
      loop.post('order.paid', { orderId: 'slow', amount: 2 }, { key: 'slow' })
      for (let i = 0; i < 5; i++) loop.post('order.paid', { orderId: `fast${i}`, amount: 1 }, { key: `fast${i}` })
      await clock.advance(5)
      expect(finished).toEqual(['fast0@1', 'fast1@2', 'fast2@3', 'fast3@4', 'fast4@5'])
      expect(loop.metrics().gauges).toMatchObject({ parked: 1, running: 1, busyKeys: 1 })
      await clock.run()
      expect(finished.slice(5)).toEqual(['slow@100', 'slow@200'])
    })

    it('lets a more urgent message of a busy key overtake its less urgent ones', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, agingMs: Number.POSITIVE_INFINITY })
      const order: number[] = []
      loop.on('work', async (m) => {
        order.push(m.payload)
        await clock.sleep(1)
      })
      loop.post('work', 1, { key: 'k', priority: 5 })
      loop.post('work', 2, { key: 'k', priority: 5 })
      loop.post('work', 3, { key: 'k', priority: 5 })
      await clock.advance(0)
      loop.post('work', 4, { key: 'k', priority: 0 })
      await clock.run()
      expect(order).toEqual([1, 4, 2, 3])
    })

    it('resize() grows and shrinks the pool at run time', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      let running = 0
      const peaks: number[] = []
      loop.on('work', async () => {
        running++
        peaks.push(running)
        await clock.sleep(10)
        running--
      })
      for (let i = 0; i < 12; i++) loop.post('work', i)
      await clock.advance(1)
      loop.resize(4)
      await clock.advance(20)
      expect(Math.max(...peaks)).toBe(4)
      loop.resize(2)
      peaks.length = 0
      await clock.run()
      expect(Math.max(...peaks)).toBeLessThanOrEqual(4)
      expect(peaks.slice(-2).every((p) => p <= 2)).toBe(true)
      expect(loop.metrics().gauges.workers).toBe(2)
      expect(loop.metrics().counters.succeeded).toBe(12)
    })

    it('resize() refuses a non-positive or fractional worker count', () => {
      const { loop } = virtualLoop()
      const error = thrown(() => loop.resize(0))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toBe('Expected `workers` to be an integer from 1 to 65536, got `0` (number)')
      expect(thrown(() => loop.resize(2.5))).toBeInstanceOf(InvalidArgumentError)
      expect(loop.metrics().gauges.workers).toBe(8)
    })

    it('yields by time too, so CPU-heavy synchronous handlers cannot hold the event loop (real clock)', async () => {
      const loop = createLoop<Messages>({ workers: 4, dispatchBudgetMs: 5 })
      loop.on('work', () => {
        const until = performance.now() + 1
        while (performance.now() < until) {} // 1 ms of CPU
      })
      for (let i = 0; i < 200; i++) loop.post('work', i)
      const t0 = performance.now()
      const immediateAfter = await new Promise<number>((resolve) => setImmediate(() => resolve(performance.now() - t0)))
      expect(immediateAfter).toBeLessThan(150) // a count budget alone (1024) would block for ~200 ms (a loaded CI machine adds its delays)
      await loop.drain()
      await loop.stop()
    })

    it('yields to the event loop on a budget while sync handlers drain (real clock)', async () => {
      const loop = createLoop<Messages>({ workers: 4, dispatchBudget: 100, capacity: 5000 })
      let handled = 0
      let handledWhenImmediateRan = -1
      loop.on('work', () => {
        handled++
      })
      for (let i = 0; i < 5000; i++) loop.post('work', i)
      setImmediate(() => {
        handledWhenImmediateRan = handled
      })
      await loop.drain()
      expect(handled).toBe(5000)
      expect(handledWhenImmediateRan).toBeGreaterThan(0)
      expect(handledWhenImmediateRan).toBeLessThan(5000)
      await loop.stop()
    })
  })
})
