/**
 * `RateLimitError`: its options are checked when it is made (a typo such as `retryAfter` is refused,
 * not silently read as the 1 s default), and its `scope` says whose messages a 429 holds back — the
 * route's (the default), one key's or one key group's on that route.
 */
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, RateLimitError, type RateLimitHold } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('RateLimitError', () => {
  describe('constructor', () => {
    it('refuses an unknown option with a typed error naming it and the option meant', () => {
      const e = thrown(() => new RateLimitError('429', { retryAfter: 30_000 } as never)) as InvalidArgumentError
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect(e.code).toBe('ERR_FLOWING_INVALID_ARGUMENT')
      expect(e.argument).toBe('options.retryAfter')
      expect(e.value).toBe(30_000)
      expect(e.message).toBe(
        "Expected `options.retryAfter` to be one of RateLimitError's options (retryAfterMs, scope, cause), " +
          'got `30000` (number); did you mean `retryAfterMs`?',
      )
      expect(thrown(() => new RateLimitError('429', { scop: 'key' } as never)).message).toContain(
        'did you mean `scope`?',
      )
    })

    it('refuses options of the wrong type', () => {
      const cases: [unknown, string][] = [
        [
          { retryAfterMs: '500' },
          'Expected `options.retryAfterMs` to be a finite number of ms, 0 or more, got `"500"` (string)',
        ],
        [
          { retryAfterMs: Number.NaN },
          'Expected `options.retryAfterMs` to be a finite number of ms, 0 or more, got `NaN` (number)',
        ],
        [
          { scope: 'tenant' },
          "Expected `options.scope` to be one of 'route', 'key', 'group', got `\"tenant\"` (string)",
        ],
        [30_000, 'Expected `options` to be an object, got `30000` (number)'],
        [null, 'Expected `options` to be an object, got `null` (null)'],
      ]
      for (const [options, message] of cases) {
        const e = thrown(() => new RateLimitError('429', options as never))
        expect(e).toBeInstanceOf(InvalidArgumentError)
        expect(e.message).toBe(message)
      }
      const boom = new Error('getter')
      const getter = {
        get retryAfterMs(): number {
          throw boom
        },
      }
      const e = thrown(() => new RateLimitError('429', getter)) as InvalidArgumentError
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect(e.argument).toBe('options.retryAfterMs')
      expect(e.cause).toBe(boom)
    })

    it('keeps what it was given: retry-after, scope (route by default) and cause', () => {
      const cause = new Error('HTTP 429')
      const e = new RateLimitError('429', { retryAfterMs: 2_000, scope: 'key', cause })
      expect([e.retryAfterMs, e.scope, e.cause, e.code]).toEqual([2_000, 'key', cause, 'ERR_FLOWING_RATE_LIMITED'])
      expect([new RateLimitError('429').retryAfterMs, new RateLimitError('429').scope]).toEqual([1000, 'route'])
    })
  })

  describe('thrown with a typo from a handler', () => {
    it('fails the attempt with the InvalidArgumentError, which says why; nothing pauses', async () => {
      const { loop, clock } = virtualLoop({ retry: { maxAttempts: 1 } })
      const failures: unknown[] = []
      loop.events.on('failed', (_m, error) => failures.push(error))
      const starts: number[] = []
      loop.on('work', (m) => {
        starts.push(clock.now())
        if (m.payload === 1) throw new RateLimitError('429', { retryAfter: 30_000 } as never)
      })
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.run()
      expect(failures).toHaveLength(1)
      const e = failures[0] as InvalidArgumentError
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect(e.message).toContain("`options.retryAfter` to be one of RateLimitError's options")
      expect(e.message).toContain('did you mean `retryAfterMs`?')
      expect(starts).toEqual([0, 0]) // no pause: the 429 never reached the loop
      const c = loop.metrics().counters
      expect(c).toMatchObject({ retryAfters: 0, failed: 1, deadLettered: 1, succeeded: 1 })
      expect(loop.deadLetters.list()[0]?.error.message).toBe(e.message)
    })
  })

  describe('scope', () => {
    it('with scope key pauses and throttles only that key; the other keys of the type run at full speed', async () => {
      const { loop, clock } = virtualLoop({ workers: 8 })
      const starts: string[] = []
      const holds: RateLimitHold[] = []
      loop.events.on('rate-limited', (_m, hold) => holds.push(hold))
      let refused = false
      loop.on('work', (m) => {
        starts.push(`${String(m.key)}${m.payload}@${clock.now()}`)
        if (m.key === 'a' && !refused) {
          refused = true
          throw new RateLimitError('tenant a over quota', { retryAfterMs: 500, scope: 'key' })
        }
      })
      for (let i = 0; i < 3; i++) for (const key of ['a', 'b', 'c']) loop.post('work', i, { key })
      await clock.advance(0)
      // b and c run all their messages at once; a's first one was refused and waits, its others behind it.
      expect(starts).toEqual(['a0@0', 'b0@0', 'c0@0', 'b1@0', 'c1@0', 'b2@0', 'c2@0'])
      // The refused message's own hold carries the wait its 429 asked for.
      expect(holds).toEqual([
        {
          limit: 'retry-after:work/key:a',
          scope: 'retry-after',
          until: 500,
          perSecond: 1,
          retryAfterScope: 'key',
          retryAfterMs: 500,
        },
      ])
      for (let i = 3; i < 6; i++) for (const key of ['b', 'c']) loop.post('work', i, { key })
      await clock.advance(0)
      expect(starts.filter((s) => s.endsWith('@0')).length).toBe(13) // b and c still at full speed
      await clock.run()
      // a: after the pause, its throttle — one start a second at first, doubling every busy 250 ms.
      expect(starts.filter((s) => s.startsWith('a'))).toEqual(['a0@0', 'a0@500', 'a1@750', 'a2@1000'])
      expect(loop.metrics().counters).toMatchObject({ retryAfters: 1, failed: 0, succeeded: 15 })
    })

    it('with scope group pauses only that group’s messages of the route', async () => {
      const { loop, clock } = virtualLoop({ workers: 8, groups: { concurrency: 8 } })
      const starts: string[] = []
      const holds: RateLimitHold[] = []
      loop.events.on('rate-limited', (_m, hold) => holds.push(hold))
      let refused = false
      loop.on('work', (m) => {
        starts.push(`${m.payload}@${clock.now()}`)
        if (m.payload === 10 && !refused) {
          refused = true
          throw new RateLimitError('429', { retryAfterMs: 300, scope: 'group' })
        }
      })
      loop.on('order.paid', (m) => void starts.push(`${m.payload.orderId}@${clock.now()}`))
      loop.post('work', 10, { group: 'g1' })
      await clock.advance(0)
      loop.post('work', 11, { group: 'g1' }) // same group, same route: waits for the pause
      loop.post('work', 20, { group: 'g2' }) // another group: runs
      loop.post('work', 30) // no group: runs
      loop.post('order.paid', { orderId: 'p', amount: 1 }, { group: 'g1' }) // same group, another route: runs
      await clock.advance(0)
      expect(starts).toEqual(['10@0', '20@0', '30@0', 'p@0'])
      expect(holds.map((h) => [h.limit, h.retryAfterScope])).toEqual([
        ['retry-after:work/group:g1', 'group'],
        ['retry-after:work/group:g1', 'group'],
      ])
      await clock.run()
      expect(starts).toEqual(['10@0', '20@0', '30@0', 'p@0', '10@300', '11@500'])
    })

    it('holds the route back for a key scope without a key, and by default', async () => {
      const { loop, clock } = virtualLoop({ workers: 4 })
      const holds: RateLimitHold[] = []
      loop.events.on('rate-limited', (_m, hold) => holds.push(hold))
      const refuse = new Map<number, RateLimitError>([
        [1, new RateLimitError('429', { retryAfterMs: 100, scope: 'key' })],
        [2, new RateLimitError('429', { retryAfterMs: 100 })],
      ])
      loop.on('work', (m) => {
        const e = refuse.get(m.payload)
        refuse.delete(m.payload)
        if (e !== undefined) throw e
      })
      loop.post('work', 1) // keyless
      await clock.run()
      loop.post('work', 2, { key: 'k' })
      await clock.run()
      expect(holds.length).toBeGreaterThanOrEqual(2)
      for (const h of holds)
        expect([h.limit, h.scope, h.retryAfterScope]).toEqual(['retry-after:work', 'retry-after', 'route'])
    })
  })
})
