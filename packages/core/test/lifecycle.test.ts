import { describe, expect, it } from 'vitest'
import { LoopAbortedError, type LoopState, LoopStoppedError } from '../src/index.js'
import { catchRethrown, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('lifecycle', () => {
    it('goes created → running → paused → running → draining → stopped, one event per change', async () => {
      const { clock, loop } = virtualLoop({ autoStart: false })
      const states: string[] = []
      loop.events.on('state', (state, previous) => states.push(`${previous}→${state}`))
      loop.on('work', () => {})
      loop.start().pause().resume().start()
      const stopped = loop.stop()
      await clock.run()
      await stopped
      expect(states).toEqual([
        'created→running',
        'running→paused',
        'paused→running',
        'running→draining',
        'draining→stopped',
      ])
      expect(loop.state).toBe<LoopState>('stopped')
      expect(thrown(() => loop.start())).toBeInstanceOf(LoopStoppedError)
      expect(thrown(() => loop.pause()).message).toBe('Cannot pause: the loop is stopped')
    })

    it('runs nothing while created or paused, and drain() waits for resume', async () => {
      const { clock, loop } = virtualLoop({ autoStart: false })
      const done: number[] = []
      loop.on('work', (m) => {
        done.push(m.payload)
      })
      loop.post('work', 1)
      let drained = false
      const drain = loop.drain().then(() => {
        drained = true
      })
      await clock.run()
      expect(done).toEqual([])
      expect(drained).toBe(false)
      loop.start()
      loop.pause()
      await clock.run()
      expect(done).toEqual([])
      loop.resume()
      await clock.run()
      await drain
      expect(done).toEqual([1])
      expect(drained).toBe(true)
    })

    it('lets running handlers finish when paused', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      const done: number[] = []
      loop.on('work', async (m) => {
        await clock.sleep(10)
        done.push(m.payload)
      })
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.advance(1)
      loop.pause()
      await clock.run()
      expect(done).toEqual([1])
      expect(loop.queued).toBe(1)
    })

    it('stop() drains by default, even a paused loop, and is idempotent', async () => {
      const { clock, loop } = virtualLoop({ autoStart: false })
      const done: number[] = []
      loop.on('work', (m) => {
        done.push(m.payload)
      })
      loop.post('work', 1)
      loop.post('work', 2)
      const a = loop.stop()
      const b = loop.stop()
      expect(a).toBe(b)
      await clock.run()
      await a
      expect(done).toEqual([1, 2])
      expect(loop.state).toBe('stopped')
    })

    it('stop({ drain: false }) cancels what is queued and aborts running handlers', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      const cancelled: number[] = []
      const reasons: unknown[] = []
      loop.events.on('cancelled', (m) => cancelled.push(m.payload as number))
      loop.on('work', async (m, ctx) => {
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            reasons.push(ctx.signal.reason)
            resolve()
          })
          clock.setTimeout(resolve, 1000)
        })
        if (ctx.signal.aborted) throw ctx.signal.reason
        return m.payload
      })
      for (let i = 1; i <= 4; i++) loop.post('work', i)
      await clock.advance(1)
      const stopped = loop.stop({ drain: false })
      await clock.run()
      await stopped
      expect(cancelled).toEqual([2, 3, 4])
      expect(reasons).toHaveLength(1)
      expect(reasons[0]).toBeInstanceOf(LoopAbortedError)
      expect(loop.metrics().counters).toMatchObject({ accepted: 4, failed: 1, cancelled: 3, succeeded: 0 })
    })

    it('drain() resolves at once when idle, and emits idle on each transition', async () => {
      const { clock, loop } = virtualLoop()
      let idles = 0
      loop.events.on('idle', () => idles++)
      loop.on('work', () => {})
      await loop.drain()
      loop.post('work', 1)
      await clock.run()
      loop.post('work', 2)
      loop.post('work', 3)
      await clock.run()
      expect(idles).toBe(2)
    })

    it('stop() rejects a bad drain option without stopping', () => {
      const { loop } = virtualLoop()
      expect(thrown(() => loop.stop({ drain: 'yes' as never })).message).toBe(
        'Expected `options.drain` to be a boolean, got `"yes"` (string)',
      )
      expect(loop.state).toBe('running')
    })
  })
})

describe('Loop', () => {
  describe('stop()', () => {
    it('admits follow-ups of running handlers while draining, but not outside posts', async () => {
      const { clock, loop } = virtualLoop()
      const done: string[] = []
      loop.on('order.paid', async (m, ctx) => {
        await clock.sleep(5)
        ctx.post('order.updated', { orderId: m.payload.orderId, status: 'paid' })
      })
      loop
        .route('order.updated', (m) => m.payload.status)
        .otherwise((m) => {
          done.push(m.payload.orderId)
        })
      loop.post('order.paid', { orderId: 'o-1', amount: 1 })
      await clock.advance(1)
      const stopped = loop.stop()
      expect(thrown(() => loop.post('order.paid', { orderId: 'o-2', amount: 1 }))).toBeInstanceOf(LoopStoppedError)
      await clock.run()
      await stopped
      expect(done).toEqual(['o-1'])
    })

    it('escalates a draining stop when called again with drain: false', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      const done: number[] = []
      const events: string[] = []
      loop.events.on('cancelled', (m) => events.push(`cancelled ${m.payload}`))
      loop.events.on('drained', () => events.push('drained'))
      loop.on('work', async (m, ctx) => {
        await clock.sleep(10)
        if (!ctx.signal.aborted) done.push(m.payload)
      })
      for (let i = 1; i <= 4; i++) loop.post('work', i)
      const graceful = loop.stop()
      await clock.advance(15) // 1 done, 2 running
      const forced = loop.stop({ drain: false })
      expect(forced).toBe(graceful)
      await clock.run()
      await forced
      expect(done).toEqual([1])
      expect(events).toEqual(['cancelled 3', 'cancelled 4'])
      expect(loop.metrics().counters).toMatchObject({ accepted: 4, succeeded: 2, cancelled: 2 })
    })

    it('refuses follow-ups once a non-draining stop began', async () => {
      const { clock, loop } = virtualLoop()
      const errors: unknown[] = []
      loop.on('order.paid', async (m, ctx) => {
        await clock.sleep(5)
        try {
          ctx.post('order.updated', { orderId: m.payload.orderId, status: 'paid' })
        } catch (error) {
          errors.push(error)
        }
      })
      loop.on('order.updated', () => {})
      loop.post('order.paid', { orderId: 'o-1', amount: 1 })
      await clock.advance(1)
      const stopped = loop.stop({ drain: false })
      await clock.run()
      await stopped
      expect(errors).toHaveLength(1)
      expect(errors[0]).toBeInstanceOf(LoopStoppedError)
    })
  })
})

describe('LoopEmitter', () => {
  it('keeps the loop consistent when a listener throws, and re-throws the error asynchronously', async () => {
    const { clock, loop } = virtualLoop()
    const rethrown = catchRethrown()
    const uncaught = rethrown.errors
    try {
      loop.events.on('succeeded', () => {
        throw new Error('listener bug')
      })
      loop.on('work', () => {})
      loop.post('work', 1)
      loop.post('work', 2)
      const drained = loop.drain()
      await clock.run()
      await drained
    } finally {
      rethrown.restore()
    }
    expect(uncaught).toEqual([new Error('listener bug'), new Error('listener bug')])
    expect(loop.metrics().counters.succeeded).toBe(2)
  })

  it('emits drained once a draining stop finished', async () => {
    const { clock, loop } = virtualLoop()
    const events: string[] = []
    loop.events.on('drained', () => events.push('drained'))
    loop.events.on('state', (s) => events.push(s))
    loop.on('work', () => {})
    loop.post('work', 1)
    const stopped = loop.stop()
    await clock.run()
    await stopped
    expect(events).toEqual(['draining', 'drained', 'stopped'])
  })
})
