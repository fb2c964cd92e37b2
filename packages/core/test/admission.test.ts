import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  LoopStoppedError,
  LoopStoppingError,
  type Message,
  type PostOptions,
  QueueFullError,
  UnknownMessageTypeError,
  UnknownRouteError,
} from '../src/index.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

function pausedLoop(capacity: number, overflow: 'reject' | 'drop-new' | 'drop-oldest-lowest' | 'wait' = 'reject') {
  const { clock, loop } = virtualLoop({ capacity, overflow, autoStart: false })
  const done: number[] = []
  loop.on('work', (m) => {
    done.push(m.payload)
  })
  return { clock, loop, done }
}

describe('Loop', () => {
  describe('post()', () => {
    it('admits a message and returns its envelope', async () => {
      const { clock, loop } = virtualLoop()
      loop.on('order.paid', () => {})
      const m = loop.post('order.paid', { orderId: 'o-1', amount: 42 }, { key: 'o-1', priority: 1 })
      expect(m.type).toBe('order.paid')
      expect(m.payload).toEqual({ orderId: 'o-1', amount: 42 })
      expect(m.key).toBe('o-1')
      expect(m.priority).toBe(1)
      expect(m.id).toMatch(/^[\w-]{10}:1$/)
      expect(m.traceId).toBe(m.id)
      expect(m.hops).toBe(0)
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ posted: 1, accepted: 1, succeeded: 1 })
    })

    it('refuses an unknown type with UnknownMessageTypeError and admits nothing', () => {
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      const error = thrown(() => loop.post('nope' as 'work', 1))
      expect(error).toBeInstanceOf(UnknownMessageTypeError)
      expect(error.message).toBe('No handler registered for message type `"nope"` (string); registered types: `work`')
      expect(loop.queued).toBe(0)
      expect(loop.metrics().counters).toMatchObject({ posted: 1, accepted: 0, rejected: 1 })
    })

    it.each([
      [{ priority: Number.NaN }, 'Expected `options.priority` to be an integer from 0 (most urgent) to 9, got `NaN`'],
      [{ priority: Number.POSITIVE_INFINITY }, 'got `Infinity` (number)'],
      [{ priority: -1 }, 'got `-1` (number)'],
      [{ priority: 10 }, 'got `10` (number)'],
      [{ priority: 2.5 }, 'got `2.5` (number)'],
      [{ priority: '1' }, 'got `"1"` (string)'],
      [{ key: { id: 1 } }, 'Expected `options.key` to be a string or a finite number, got `[object]` (object)'],
      [{ key: Number.NaN }, 'Expected `options.key` to be a string or a finite number, got `NaN` (number)'],
      [{ overflow: 'nope' }, 'Expected `options.overflow` to be one of'],
      [{ prio: 1 }, 'Expected `options.prio` to be one of the known options'],
    ])('refuses bad options %o with InvalidArgumentError', (options, message) => {
      const { loop } = pausedLoop(4)
      const error = thrown(() => loop.post('work', 1, options as unknown as PostOptions))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain(message)
      expect(loop.queued).toBe(0)
    })

    it('refuses a route key with no handler and no otherwise()', () => {
      const { loop } = virtualLoop()
      loop.route('order.updated', (m) => m.payload.status).on('paid', () => {})
      const error = thrown(() => loop.post('order.updated', { orderId: 'o', status: 'refunded' }))
      expect(error).toBeInstanceOf(UnknownRouteError)
      expect(error.message).toBe(
        'No handler for route `"refunded"` (string) of message type `order.updated` and no otherwise(); routes: `paid`',
      )
      expect(loop.queued).toBe(0)
    })

    it('refuses posts after stop() with LoopStoppedError', async () => {
      const { clock, loop } = pausedLoop(4)
      const stopped = loop.stop()
      const error = thrown(() => loop.post('work', 1))
      expect(error).toBeInstanceOf(LoopStoppedError)
      expect(error).toBeInstanceOf(LoopStoppingError)
      expect(error.message).toBe('Cannot post `work`: the loop is stopping')
      await clock.run()
      await stopped
      expect(thrown(() => loop.post('work', 1)).message).toBe('Cannot post `work`: the loop is stopped')
      expect(loop.metrics().counters).toMatchObject({ posted: 2, accepted: 0, rejected: 2 })
    })
  })

  describe('overflow: reject', () => {
    it('throws QueueFullError with the live numbers and keeps the queue as it was', () => {
      const { loop } = pausedLoop(2)
      loop.post('work', 1)
      loop.post('work', 2)
      const error = thrown(() => loop.post('work', 3))
      expect(error).toBeInstanceOf(QueueFullError)
      expect(error.message).toBe('Queue is full: cannot admit `work` (2/2 queued, 0 running, 0 producers waiting)')
      expect(loop.queued).toBe(2)
    })

    it('tryPost() returns the refusal instead of throwing', () => {
      const { loop } = pausedLoop(1)
      expect(loop.tryPost('work', 1)).toMatchObject({ ok: true, status: 'queued' })
      const result = loop.tryPost('work', 2)
      expect(result.ok).toBe(false)
      expect(result.status).toBe('full')
      if (result.status === 'full') expect(result.error).toBeInstanceOf(QueueFullError)
      expect(loop.metrics().counters).toMatchObject({ posted: 2, accepted: 1, rejected: 1 })
    })
  })

  describe('overflow: drop-new', () => {
    it('drops the newcomer with an event, counts it accepted and dropped', async () => {
      const { clock, loop, done } = pausedLoop(2, 'drop-new')
      const dropped: [number, string][] = []
      loop.events.on('dropped', (m, reason) => dropped.push([m.payload as number, reason]))
      loop.post('work', 1)
      loop.post('work', 2)
      const result = loop.tryPost('work', 3)
      expect(result).toMatchObject({ ok: false, status: 'dropped' })
      loop.start()
      await clock.run()
      expect(done).toEqual([1, 2])
      expect(dropped).toEqual([[3, 'drop-new']])
      expect(loop.metrics().counters).toMatchObject({ posted: 3, accepted: 3, succeeded: 2, dropped: 1 })
    })
  })

  describe('overflow: drop-oldest-lowest', () => {
    it('evicts the oldest message of the least urgent level, never a more urgent one', async () => {
      const { clock, loop, done } = pausedLoop(3, 'drop-oldest-lowest')
      const dropped: number[] = []
      loop.events.on('dropped', (m) => dropped.push(m.payload as number))
      loop.post('work', 1, { priority: 5 })
      loop.post('work', 2, { priority: 8 })
      loop.post('work', 3, { priority: 8 })
      loop.post('work', 4, { priority: 2 }) // evicts 2 (oldest of level 8)
      loop.post('work', 5, { priority: 9 }) // less urgent than everything queued: dropped itself
      loop.post('work', 6, { priority: 8 }) // evicts 3 (the only level-8 message)
      loop.start()
      await clock.run()
      expect(dropped).toEqual([2, 5, 3])
      expect(done).toEqual([4, 1, 6])
      expect(loop.metrics().counters).toMatchObject({ accepted: 6, succeeded: 3, dropped: 3 })
    })
  })

  describe('send()', () => {
    it('waits for space under `wait` and admits producers by priority then arrival', async () => {
      const { clock, loop, done } = pausedLoop(1, 'wait')
      loop.post('work', 0)
      const order: number[] = []
      const sends = [
        loop.send('work', 1, { priority: 5 }),
        loop.send('work', 2, { priority: 1 }),
        loop.send('work', 3, { priority: 5 }),
      ].map((p) => p.then((m: Message<Messages>) => order.push(m.payload as number)))
      expect(loop.metrics().gauges.waitingProducers).toBe(3)
      expect(thrown(() => loop.post('work', 9))).toBeInstanceOf(QueueFullError)
      loop.start()
      await clock.run()
      await Promise.all(sends)
      expect(order).toEqual([2, 1, 3])
      expect(done).toEqual([0, 2, 1, 3])
    })

    it('rejects with SendTimeoutError after waitTimeoutMs and admits nothing', async () => {
      const { clock, loop } = pausedLoop(1, 'wait')
      loop.post('work', 0)
      const sent = loop.send('work', 1, { waitTimeoutMs: 50 })
      const outcome = sent.catch((e: Error) => e)
      await clock.advance(49)
      expect(loop.metrics().gauges.waitingProducers).toBe(1)
      await clock.advance(1)
      const error = await outcome
      expect(error).toMatchObject({ name: 'SendTimeoutError', code: 'ERR_FLOWING_SEND_TIMEOUT' })
      expect((error as Error).message).toBe('send(`work`) waited 50 ms for space and gave up (1/1 queued)')
      expect(loop.metrics().counters).toMatchObject({ posted: 2, accepted: 1, rejected: 1 })
    })

    it('rejects with SendAbortedError when its signal aborts, and the next waiter gets the slot', async () => {
      const { clock, loop, done } = pausedLoop(1, 'wait')
      loop.post('work', 0)
      const controller = new AbortController()
      const first = loop.send('work', 1, { signal: controller.signal, priority: 0 }).catch((e: Error) => e)
      const second = loop.send('work', 2)
      controller.abort(new Error('user gave up'))
      const error = await first
      expect(error).toMatchObject({ name: 'SendAbortedError' })
      expect((error as Error).cause).toEqual(new Error('user gave up'))
      loop.start()
      await clock.run()
      await second
      expect(done).toEqual([0, 2])
    })

    it('rejects at once when the signal is already aborted, with or without room', async () => {
      const { loop } = pausedLoop(1, 'wait')
      await expect(loop.send('work', 1, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'SendAbortedError',
      })
      expect(loop.queued).toBe(0)
      loop.post('work', 0)
      await expect(loop.send('work', 1, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'SendAbortedError',
      })
      expect(loop.metrics().gauges.waitingProducers).toBe(0)
    })

    it('rejects waiting producers with LoopStoppedError when the loop stops', async () => {
      const { clock, loop } = pausedLoop(1, 'wait')
      loop.post('work', 0)
      const waiting = loop.send('work', 1).catch((e: Error) => e)
      const stopped = loop.stop()
      expect(await waiting).toBeInstanceOf(LoopStoppedError)
      await clock.run()
      await stopped
      expect(loop.metrics().counters).toMatchObject({ posted: 2, accepted: 1, rejected: 1, succeeded: 1 })
    })

    it('validates waitTimeoutMs and signal even when there is room, and post() refuses them', async () => {
      const { loop } = pausedLoop(4, 'wait')
      await expect(loop.send('work', 1, { waitTimeoutMs: -1 })).rejects.toThrow(
        'Expected `options.waitTimeoutMs` to be a finite non-negative number, got `-1` (number)',
      )
      await expect(loop.send('work', 1, { signal: 'stop' as never })).rejects.toThrow(
        'Expected `options.signal` to be an AbortSignal, got `"stop"` (string)',
      )
      expect(thrown(() => loop.post('work', 1, { timeoutMs: 5 } as never)).message).toContain(
        'Expected `options.timeoutMs` to be one of the known options (key, priority, overflow, handlerTimeoutMs, retry, idempotencyKey, headers, group, signal, jobKey, jobKeyMode, maxWaitMs)',
      )
      expect(loop.queued).toBe(0)
      expect(loop.metrics().counters).toMatchObject({ posted: 3, accepted: 0, rejected: 3 })
    })

    it('refuses a producer beyond maxWaiting at once', async () => {
      const { loop } = virtualLoop({ capacity: 1, overflow: 'wait', maxWaiting: 2, autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 0)
      const waiting = [loop.send('work', 1), loop.send('work', 2)]
      const error = await loop.send('work', 3).catch((e: Error) => e)
      expect(error).toBeInstanceOf(QueueFullError)
      expect((error as Error).message).toBe(
        'Queue is full: cannot admit `work` (1/1 queued, 0 running, 2 producers waiting)',
      )
      const stopped = loop.stop({ drain: false })
      await Promise.allSettled(waiting)
      await stopped
    })

    it('applies the policy at once when it is not `wait`', async () => {
      const { loop } = pausedLoop(1, 'reject')
      loop.post('work', 0)
      await expect(loop.send('work', 1)).rejects.toBeInstanceOf(QueueFullError)
    })
  })
})
