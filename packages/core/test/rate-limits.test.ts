import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, RateLimitError, type RateLimitHold } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

const at = (t: number, n: number): number[] => Array.from({ length: n }, () => t)

describe('Loop', () => {
  describe('rate limits', () => {
    it('lets a burst of max through, then one per freed window slot, never more than max in any window', async () => {
      const { loop, clock } = virtualLoop({ workers: 8 })
      const starts: number[] = []
      loop.on('work', () => void starts.push(clock.now()), { rateLimit: { max: 3, perMs: 100 } })
      for (let i = 0; i < 10; i++) loop.post('work', i)
      await clock.advance(0)
      expect(starts).toEqual([0, 0, 0])
      expect(loop.metrics().gauges.limited).toBe(7)
      await clock.advance(99)
      expect(starts.length).toBe(3)
      await clock.advance(1)
      expect(starts).toEqual([0, 0, 0, 100, 100, 100])
      await clock.run()
      expect(starts).toEqual([0, 0, 0, 100, 100, 100, 200, 200, 200, 300])
      const m = loop.metrics()
      expect(m.counters.succeeded).toBe(10)
      expect(m.counters.rateLimited).toBe(7)
      expect(m.gauges.limited).toBe(0)
    })

    it('holds no worker: other types flow past a limited one', async () => {
      const { loop, clock } = virtualLoop({ workers: 1 })
      const ran: string[] = []
      loop.on('work', (m) => void ran.push(`w${m.payload}`), { rateLimit: { max: 1, perMs: 1000 } })
      loop.on('order.paid', (m) => void ran.push(m.payload.orderId))
      loop.post('work', 1)
      loop.post('work', 2)
      loop.post('order.paid', { orderId: 'a', amount: 1 })
      loop.post('order.paid', { orderId: 'b', amount: 1 })
      await clock.advance(0)
      expect(ran).toEqual(['w1', 'a', 'b'])
      await clock.advance(1000)
      expect(ran).toEqual(['w1', 'a', 'b', 'w2'])
    })

    it('keeps a key in order: a later message of the key waits behind a limited one', async () => {
      const { loop, clock } = virtualLoop({ workers: 4 })
      const ran: string[] = []
      loop.on('work', (m) => void ran.push(`w${m.payload}`), { rateLimit: { max: 1, perMs: 50, per: 'type' } })
      loop.on('order.paid', (m) => void ran.push(m.payload.orderId))
      loop.post('work', 1, { key: 'k' })
      loop.post('work', 2, { key: 'k' })
      loop.post('order.paid', { orderId: 'after', amount: 1 }, { key: 'k' })
      await clock.run()
      expect(ran).toEqual(['w1', 'w2', 'after'])
    })

    it('gives each key its own budget with per: key, and reports every wait', async () => {
      const { loop, clock } = virtualLoop({ workers: 8, rateLimit: { max: 1, perMs: 10, per: 'key' } })
      const starts: string[] = []
      const holds: RateLimitHold[] = []
      loop.events.on('rate-limited', (_m, hold) => holds.push(hold))
      loop.on('work', (m) => void starts.push(`${m.key}@${clock.now()}`))
      for (const key of ['a', 'b', 'a', 'b']) loop.post('work', 1, { key })
      await clock.run()
      expect(starts).toEqual(['a@0', 'b@0', 'a@10', 'b@10'])
      expect(holds).toEqual([
        { limit: 'key:a', scope: 'key', until: 10 },
        { limit: 'key:b', scope: 'key', until: 10 },
      ])
    })

    it('gates every start with a loop-wide limit without moving the backlog', async () => {
      const { loop, clock } = virtualLoop({ workers: 8, rateLimit: { max: 2, perMs: 1000 } })
      const starts: number[] = []
      loop.on('work', () => void starts.push(clock.now()))
      for (let i = 0; i < 5; i++) loop.post('work', i)
      await clock.advance(0)
      expect(starts).toEqual([0, 0])
      expect(loop.metrics().gauges).toMatchObject({ queued: 3, limited: 0 })
      await clock.run()
      expect(starts).toEqual([0, 0, 1000, 1000, 2000])
    })

    it('reschedules a RateLimitError without consuming an attempt, pausing its whole route', async () => {
      const { loop, clock } = virtualLoop({ workers: 4, retry: { maxAttempts: 1 } })
      const starts: string[] = []
      let first = true
      loop.on('work', (m) => {
        starts.push(`${m.payload}@${clock.now()}`)
        if (first) {
          first = false
          throw new RateLimitError('429', { retryAfterMs: 500 })
        }
      })
      loop.post('work', 1)
      await clock.advance(0)
      loop.post('work', 2)
      await clock.advance(100)
      expect(starts).toEqual(['1@0'])
      await clock.run()
      // After the pause the route is throttled: one start per second, doubling every busy 250 ms.
      expect(starts).toEqual(['1@0', '1@500', '2@750'])
      const m = loop.metrics().counters
      expect(m).toMatchObject({ succeeded: 2, failed: 0, deadLettered: 0, retryAfters: 1 })
      expect(loop.trace(loop.post('work', 3).id)).toBeUndefined()
    })

    it('slows a refused route down and lets it find the downstream again (slow start, cuts, calm)', async () => {
      const { loop, clock } = virtualLoop({ workers: 8 })
      const starts: number[] = []
      const holds: RateLimitHold[] = []
      loop.events.on('rate-limited', (_m, hold) => holds.push(hold))
      let refuse = new Set([0, 16])
      loop.on('work', (m) => {
        starts.push(clock.now())
        if (refuse.delete(m.payload)) throw new RateLimitError('429', { retryAfterMs: 100 })
      })
      loop.post('work', 0)
      await clock.advance(0)
      for (let i = 1; i < 40; i++) loop.post('work', i)
      await clock.advance(100) // the pause ends: one start, then 2, 4, 8 … per second
      expect(starts).toEqual([0, 100])
      expect(holds.at(-1)).toMatchObject({ limit: 'retry-after:work', scope: 'retry-after', perSecond: 1 })
      await clock.advance(149)
      expect(starts).toEqual([0, 100])
      await clock.advance(1)
      expect(starts).toEqual([0, 100, 250])
      await clock.advance(250)
      expect(starts).toEqual([0, 100, 250, 500, 500])
      await clock.run()
      expect(starts.length).toBe(42) // 40 messages, 2 of them twice
      // Never more in any second than the throttle allowed: 1, 2, 4, 8, then a 30 % cut after the
      // second 429, growing by about 5 % per busy 250 ms.
      // Slow start: 1, 2, 4, 8, 16 a second (a step each 250 ms while messages wait) until #16's 429
      // at 1100 cuts it to 11; from there on + 1 per busy step, up to 18 by the end.
      expect(starts.slice(0, 19)).toEqual([0, 100, 250, 500, 500, ...at(750, 4), ...at(1000, 8), 1100, 1250])
      const perSecond = starts.map((t) => starts.filter((u) => u > t - 1000 && u <= t).length)
      expect(Math.max(...perSecond)).toBe(18)
      expect(holds.some((h) => h.perSecond !== undefined && h.perSecond > 1)).toBe(true)
      // Ten seconds with nothing waiting: the throttle goes, a burst flows at once again.
      await clock.advance(10_500)
      refuse = new Set()
      const before = starts.length
      for (let i = 0; i < 30; i++) loop.post('work', 100 + i)
      await clock.advance(0)
      expect(starts.length - before).toBe(30)
    })

    it('refuses bad limits with typed errors naming the field', () => {
      const { loop } = virtualLoop()
      const e = thrown(() => loop.on('work', () => {}, { rateLimit: { max: 0, perMs: 10 } }))
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect(e.message).toBe('Expected `options.rateLimit.max` to be an integer from 1 to 1000000, got `0` (number)')
      expect(thrown(() => loop.on('work', () => {}, { rateLimit: { max: 1, perMs: Number.NaN } })).message).toBe(
        'Expected `options.rateLimit.perMs` to be a positive finite number of ms, got `NaN` (number)',
      )
      expect(thrown(() => loop.on('work', () => {}, { rateLimit: { max: 1, perMs: 1, per: 'loop' } })).message).toBe(
        "Expected `options.rateLimit.per` to be one of 'type', 'route', 'key', got `\"loop\"` (string)",
      )
      expect(thrown(() => loop.on('work', () => {}, { rateLimit: { max: 1, perMS: 1 } as never })).message).toContain(
        'did you mean `perMs`?',
      )
      expect(() => loop.post('work', 1)).toThrow('No handler registered')
      expect(thrown(() => new RateLimitError('x', { retryAfterMs: -1 })).message).toBe(
        'Expected `options.retryAfterMs` to be a finite number of ms, 0 or more, got `-1` (number)',
      )
    })
  })
})
