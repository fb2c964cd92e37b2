import { describe, expect, it } from 'vitest'
import { DuplicateHandlerError, HopLimitError, InvalidArgumentError, type Message } from '../src/index.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('route()', () => {
    it('dispatches on the route key, falling back to otherwise()', async () => {
      const { clock, loop } = virtualLoop()
      const seen: string[] = []
      loop
        .route('order.updated', (m) => m.payload.status)
        .on('paid', (m) => {
          seen.push(`paid ${m.payload.orderId} ${m.routeKey}`)
        })
        .on('refunded', () => {
          seen.push('refunded')
        })
        .otherwise((m) => {
          seen.push(`other ${m.routeKey}`)
        })
      loop.post('order.updated', { orderId: 'o-1', status: 'paid' })
      loop.post('order.updated', { orderId: 'o-2', status: 'pending' })
      loop.post('order.updated', { orderId: 'o-3', status: 'refunded' })
      await clock.run()
      expect(seen).toEqual(['paid o-1 paid', 'other pending', 'refunded'])
    })

    it('refuses a second handler for the same route unless replace is set', () => {
      const { loop } = virtualLoop()
      const router = loop.route('order.updated', (m) => m.payload.status).on('paid', () => {})
      const error = thrown(() => router.on('paid', () => {}))
      expect(error).toBeInstanceOf(DuplicateHandlerError)
      expect(error.message).toBe(
        'A handler is already registered for `order.updated` › `paid`; pass { replace: true } to replace it',
      )
      expect(() => router.on('paid', () => {}, { replace: true })).not.toThrow()
      expect(thrown(() => router.otherwise(() => {}).otherwise(() => {}))).toBeInstanceOf(DuplicateHandlerError)
    })
  })

  describe('on()', () => {
    it('refuses a second handler for a type unless replace is set', async () => {
      const { clock, loop } = virtualLoop()
      const seen: string[] = []
      loop.on('work', () => {
        seen.push('first')
      })
      expect(thrown(() => loop.on('work', () => {}))).toBeInstanceOf(DuplicateHandlerError)
      expect(thrown(() => loop.route('work', () => 'x'))).toBeInstanceOf(DuplicateHandlerError)
      loop.on(
        'work',
        () => {
          seen.push('second')
        },
        { replace: true },
      )
      loop.post('work', 1)
      await clock.run()
      expect(seen).toEqual(['second'])
    })

    it('refuses a handler that is not a function and an empty type', () => {
      const { loop } = virtualLoop()
      expect(thrown(() => loop.on('work', 42 as never)).message).toBe(
        'Expected `handler` to be a function, got `42` (number)',
      )
      expect(thrown(() => loop.on('' as 'work', () => {}))).toBeInstanceOf(InvalidArgumentError)
      expect(thrown(() => loop.use('mw' as never))).toBeInstanceOf(InvalidArgumentError)
    })
  })

  describe('handlers', () => {
    it('fail only their own message, sync or async, and the loop keeps going', async () => {
      const { clock, loop } = virtualLoop()
      const failures: unknown[] = []
      loop.events.on('failed', (m, error) => failures.push([m.payload, (error as Error).message]))
      loop.on('work', async (m) => {
        await clock.sleep(1)
        if (m.payload === 2) throw new Error('async boom')
      })
      loop
        .route('order.updated', (m) => m.payload.status)
        .otherwise((m) => {
          if (m.payload.orderId === 'bad') throw new Error('sync boom')
        })
      loop.post('work', 1)
      loop.post('work', 2)
      loop.post('order.updated', { orderId: 'bad', status: 'paid' })
      loop.post('order.updated', { orderId: 'good', status: 'paid' })
      await clock.run()
      expect(failures).toEqual([
        [{ orderId: 'bad', status: 'paid' }, 'sync boom'],
        [2, 'async boom'],
      ])
      expect(loop.metrics().counters).toMatchObject({ accepted: 4, succeeded: 2, failed: 2 })
    })
  })

  describe('thenable results', () => {
    it('settle once even if a foreign thenable calls back twice', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      loop.on('work', () => ({
        // biome-ignore lint/suspicious/noThenProperty: a deliberately misbehaving thenable
        then(ok: (v: unknown) => void, fail: (e: unknown) => void) {
          ok('first')
          ok('again')
          fail(new Error('and a rejection'))
        },
      }))
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 2, failed: 0 })
    })
  })

  describe('use()', () => {
    it('wraps handlers outermost-first, and after-code runs after the handler', async () => {
      const { clock, loop } = virtualLoop()
      const trace: string[] = []
      loop.use(async (m, _ctx, next) => {
        trace.push(`a> ${m.payload}`)
        await next()
        trace.push('<a')
      })
      loop.use(async (_m, _ctx, next) => {
        trace.push('b>')
        await next()
        trace.push('<b')
      })
      loop.on('work', async () => {
        await clock.sleep(5)
        trace.push('handler')
      })
      loop.post('work', 7)
      await clock.run()
      expect(trace).toEqual(['a> 7', 'b>', 'handler', '<b', '<a'])
      expect(loop.metrics().counters.succeeded).toBe(1)
    })

    it('fails the message when a middleware calls next() twice', async () => {
      const { clock, loop } = virtualLoop()
      const errors: string[] = []
      loop.events.on('failed', (_m, e) => errors.push((e as Error).message))
      loop.use(async (_m, _ctx, next) => {
        await next()
        await next()
      })
      loop.on('work', () => {})
      loop.post('work', 1)
      await clock.run()
      expect(errors).toEqual(['next() called more than once by middleware #0'])
    })

    it('can short-circuit: not calling next() skips the handler', async () => {
      const { clock, loop } = virtualLoop()
      let ran = false
      loop.use(() => {})
      loop.on('work', () => {
        ran = true
      })
      loop.post('work', 1)
      await clock.run()
      expect(ran).toBe(false)
      expect(loop.metrics().counters.succeeded).toBe(1)
    })
  })

  describe('ctx.post()', () => {
    it('posts follow-ups that carry the trace id and one more hop', async () => {
      const { clock, loop } = virtualLoop()
      const seen: Message<Messages>[] = []
      loop.on('order.paid', (m, ctx) => {
        // a follow-up can reuse its parent's key and priority as they are
        ctx.post('order.updated', { orderId: m.payload.orderId, status: 'paid' }, { key: m.key, priority: m.priority })
      })
      loop
        .route('order.updated', (m) => m.payload.status)
        .otherwise((m, ctx) => {
          seen.push(m)
          expect(ctx.message).toBe(m)
          expect(ctx.attempt).toBe(1)
        })
      const root = loop.post('order.paid', { orderId: 'o-9', amount: 1 }, { key: 'o-9' })
      await clock.run()
      expect(seen).toHaveLength(1)
      expect(seen[0]?.traceId).toBe(root.id)
      expect(seen[0]?.hops).toBe(1)
      expect(seen[0]?.key).toBe('o-9')
    })

    it('refuses a follow-up chain deeper than maxHops with HopLimitError', async () => {
      const { clock, loop } = virtualLoop({ maxHops: 3 })
      const errors: Error[] = []
      let runs = 0
      loop.on('work', (m, ctx) => {
        runs++
        try {
          ctx.post('work', m.payload + 1)
        } catch (error) {
          errors.push(error as Error)
        }
      })
      loop.post('work', 0)
      await clock.run()
      expect(runs).toBe(4) // hops 0, 1, 2, 3
      expect(errors).toHaveLength(1)
      expect(errors[0]).toBeInstanceOf(HopLimitError)
      expect(errors[0]?.message).toBe('Follow-up `work` would be 4 hops deep; the limit is maxHops = 3')
      expect(loop.metrics().counters).toMatchObject({ posted: 5, accepted: 4, rejected: 1, succeeded: 4 })
    })

    it('tryPost() returns a result when the queue is full', async () => {
      const { clock, loop } = virtualLoop({ capacity: 1, workers: 1 })
      const statuses: string[] = []
      loop.on('order.paid', (_m, ctx) => {
        statuses.push(ctx.tryPost('work', 1).status, ctx.tryPost('work', 2).status)
      })
      loop.on('work', () => {})
      loop.post('order.paid', { orderId: 'o', amount: 1 })
      await clock.run()
      expect(statuses).toEqual(['queued', 'full'])
    })
  })
})
