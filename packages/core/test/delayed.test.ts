import { describe, expect, it } from 'vitest'
import { DelayedFullError, InvalidArgumentError, LoopStoppedError, UnknownMessageTypeError } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

function timedLoop(options: Parameters<typeof virtualLoop>[0] = {}) {
  const { clock, loop } = virtualLoop(options)
  const started: [number, number][] = []
  loop.on('work', (m) => {
    started.push([m.payload, clock.now()])
  })
  return { clock, loop, started }
}

describe('Loop', () => {
  describe('postDelayed()', () => {
    it('runs a message no earlier than its due time, in due order', async () => {
      const { clock, loop, started } = timedLoop()
      loop.postDelayed('work', 1, 50)
      loop.postDelayed('work', 2, 10)
      loop.postDelayed('work', 3, 10.5)
      const zero = loop.postDelayed('work', 4, 0)
      expect(zero.dueAt).toBe(0)
      await clock.advance(9)
      expect(started).toEqual([[4, 0]])
      await clock.run()
      expect(started.map(([p]) => p)).toEqual([4, 2, 3, 1])
      for (const [p, at] of started) expect(at).toBeGreaterThanOrEqual({ 1: 50, 2: 10, 3: 10.5, 4: 0 }[p] as number)
      expect(loop.metrics().counters).toMatchObject({ posted: 4, accepted: 4, succeeded: 4 })
    })

    it('sets postedAt when the message enters the queue, so queue wait starts then', async () => {
      const { clock, loop } = timedLoop()
      const handle = loop.postDelayed('work', 1, 100, { key: 'k', priority: 2 })
      expect(handle.pending).toBe(true)
      expect(loop.metrics().gauges).toMatchObject({ delayed: 1, queued: 0 })
      await clock.run()
      expect(handle.pending).toBe(false)
      expect(handle.message.postedAt).toBeGreaterThanOrEqual(100)
      expect(handle.message.key).toBe('k')
      expect(loop.metrics().gauges.delayed).toBe(0)
    })

    it('cancel() gives the outcome cancelled, once, and the message never runs', async () => {
      const { clock, loop, started } = timedLoop()
      const cancelled: unknown[] = []
      loop.events.on('cancelled', (m) => cancelled.push(m.payload))
      const handle = loop.postDelayed('work', 1, 100)
      loop.postDelayed('work', 2, 100)
      await clock.advance(50)
      expect(handle.cancel()).toBe(true)
      expect(handle.cancel()).toBe(false)
      await clock.run()
      expect(started.map(([p]) => p)).toEqual([2])
      expect(cancelled).toEqual([1])
      expect(handle.cancel()).toBe(false)
      expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 1, cancelled: 1 })
    })

    it('handles huge delays without overflow (no 24.8-day setTimeout wrap)', async () => {
      const { clock, loop, started } = timedLoop()
      const far = loop.postDelayed('work', 1, 2 ** 31 + 5)
      loop.postDelayed('work', 2, Number.MAX_SAFE_INTEGER)
      await clock.advance(2 ** 31)
      expect(started).toEqual([])
      await clock.advance(10)
      expect(started).toEqual([[1, 2 ** 31 + 5]])
      expect(far.pending).toBe(false)
      expect(loop.metrics().gauges.delayed).toBe(1)
      await loop.stop()
    })

    it.each([
      [Number.NaN, '`NaN` (number)'],
      [-1, '`-1` (number)'],
      [Number.POSITIVE_INFINITY, '`Infinity` (number)'],
      ['10', '`"10"` (string)'],
      [Number.MAX_SAFE_INTEGER + 2, `\`${Number.MAX_SAFE_INTEGER + 2}\` (number)`],
    ])('refuses delay %o with InvalidArgumentError and schedules nothing', (delay, shown) => {
      const { loop } = timedLoop()
      const error = thrown(() => loop.postDelayed('work', 1, delay as number))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toBe(`Expected \`delayMs\` to be a number from 0 to Number.MAX_SAFE_INTEGER, got ${shown}`)
      expect(loop.metrics().gauges.delayed).toBe(0)
      expect(loop.metrics().counters).toMatchObject({ posted: 1, accepted: 0, rejected: 1 })
    })

    it('refuses an unknown type, bad options and posts after stop, scheduling nothing', async () => {
      const { loop } = timedLoop()
      expect(thrown(() => loop.postDelayed('nope' as 'work', 1, 5))).toBeInstanceOf(UnknownMessageTypeError)
      expect(thrown(() => loop.postDelayed('work', 1, 5, { priority: 11 as 1 }))).toBeInstanceOf(InvalidArgumentError)
      await loop.stop()
      expect(thrown(() => loop.postDelayed('work', 1, 5)).message).toBe('Cannot schedule `work`: the loop is stopped')
      expect(thrown(() => loop.postAt('work', 1, 5))).toBeInstanceOf(LoopStoppedError)
      expect(loop.metrics().gauges.delayed).toBe(0)
      expect(loop.metrics().counters).toMatchObject({ posted: 4, accepted: 0, rejected: 4 })
    })

    it('refuses more than maxDelayed pending messages with DelayedFullError', () => {
      const { loop } = timedLoop({ maxDelayed: 2 })
      loop.postDelayed('work', 1, 5)
      loop.postDelayed('work', 2, 5)
      const error = thrown(() => loop.postDelayed('work', 3, 5))
      expect(error).toBeInstanceOf(DelayedFullError)
      expect(error.message).toBe('Cannot schedule `work`: 2 delayed messages pending, maxDelayed = 2')
    })
  })

  describe('postAt()', () => {
    it('schedules at an absolute clock time; a past time is due at once', async () => {
      const { clock, loop, started } = timedLoop()
      await clock.advance(100)
      loop.postAt('work', 1, 150)
      loop.postAt('work', 2, 20)
      await clock.run()
      expect(started).toEqual([
        [2, 100],
        [1, 150],
      ])
      expect(thrown(() => loop.postAt('work', 3, Number.NaN)).message).toBe(
        'Expected `at` to be a finite clock time in ms, got `NaN` (number)',
      )
    })
  })

  describe('delayed messages that find the queue full', () => {
    it('wait outside the queue under reject, then enter first when a slot frees (nothing vanishes)', async () => {
      const { clock, loop } = virtualLoop({ capacity: 1, workers: 1 })
      const order: number[] = []
      loop.on('work', async (m) => {
        order.push(m.payload)
        await clock.sleep(10)
      })
      loop.post('work', 0) // runs 0–10
      await clock.advance(0)
      loop.post('work', 1) // fills the queue
      loop.postDelayed('work', 2, 5) // due at 5: queue full → overdue
      await clock.advance(6)
      expect(loop.metrics().gauges).toMatchObject({ queued: 1, overdue: 1, delayed: 0 })
      expect(() => loop.post('work', 3)).toThrow('Queue is full')
      await clock.run()
      expect(order).toEqual([0, 1, 2])
      expect(loop.metrics().counters).toMatchObject({ accepted: 3, succeeded: 3, rejected: 1 })
    })

    it('are dropped with an event under drop-new', async () => {
      const { clock, loop } = virtualLoop({ capacity: 1, workers: 1, overflow: 'drop-new', autoStart: false })
      const dropped: unknown[] = []
      loop.events.on('dropped', (m, reason) => dropped.push([m.payload, reason]))
      loop.on('work', () => {})
      loop.post('work', 1)
      loop.postDelayed('work', 2, 5)
      await clock.advance(10)
      expect(dropped).toEqual([[2, 'drop-new']])
      loop.start()
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 1, dropped: 1 })
    })

    it('can be cancelled while overdue', async () => {
      const { clock, loop } = virtualLoop({ capacity: 1, workers: 1, autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 1)
      const late = loop.postDelayed('work', 2, 5)
      await clock.advance(10)
      expect(late.pending).toBe(true)
      expect(late.cancel()).toBe(true)
      loop.start()
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 1, cancelled: 1 })
      expect(loop.metrics().gauges.overdue).toBe(0)
    })
  })

  describe('stop()', () => {
    it('cancels delayed messages not yet due (outcome cancelled) and disarms the timer', async () => {
      const { clock, loop, started } = timedLoop()
      loop.postDelayed('work', 1, 1000)
      loop.post('work', 2)
      const stopped = loop.stop()
      await clock.run()
      await stopped
      expect(started.map(([p]) => p)).toEqual([2])
      expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 1, cancelled: 1 })
      expect(clock.pending).toBe(0)
    })
  })
})
