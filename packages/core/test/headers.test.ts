/**
 * Message headers: a small string map every message carries — given at post, inherited by follow-ups,
 * added by stampers — kept through retries, dead letters and their replays, snapshots and journals;
 * a bad map, or a stamper that throws, refuses the post with a typed error and admits nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  MAX_HEADER_VALUE,
  MAX_HEADERS,
  MemoryStore,
  type Message,
  type MessageHeaders,
  NO_HEADERS,
  VirtualClock,
} from '../src/index.js'
import { ended, thrown, virtualLoop } from './fixtures.js'

describe('headers given at post', () => {
  it('reach the handler and the events as a frozen copy, and a plain post has the shared empty map', async () => {
    const { loop } = virtualLoop()
    const seen: MessageHeaders[] = []
    loop.on('work', (m) => void seen.push(m.headers))
    const given: Record<string, string> = { 'x-request-id': 'r-1', traceparent: '00-abc-def-01' }
    const posted = loop.post('work', 1, { headers: given })
    given['x-request-id'] = 'changed later'
    loop.post('work', 2)
    await loop.drain()
    expect(seen).toEqual([{ 'x-request-id': 'r-1', traceparent: '00-abc-def-01' }, {}])
    expect(Object.isFrozen(seen[0])).toBe(true)
    expect(seen[1]).toBe(NO_HEADERS)
    expect(posted.headers).toBe(seen[0])
    expect(JSON.parse(JSON.stringify(posted)).headers).toEqual({ 'x-request-id': 'r-1', traceparent: '00-abc-def-01' })
  })

  it('work with tryPost, send and postDelayed alike', async () => {
    const { loop, clock } = virtualLoop()
    const seen: unknown[] = []
    loop.on('work', (m) => void seen.push([m.payload, m.headers['h']]))
    loop.tryPost('work', 1, { headers: { h: 'try' } })
    await loop.send('work', 2, { headers: { h: 'send' } })
    loop.postDelayed('work', 3, 10, { headers: { h: 'delayed' } })
    await clock.advance(10)
    await loop.drain()
    expect(seen).toEqual([
      [1, 'try'],
      [2, 'send'],
      [3, 'delayed'],
    ])
  })

  it('a header named __proto__ is an ordinary header', async () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    const headers = JSON.parse('{"__proto__":"x","a":"1"}') as MessageHeaders
    const m = loop.post('work', 1, { headers })
    expect(Object.keys(m.headers)).toEqual(['__proto__', 'a'])
    expect(Object.getPrototypeOf(m.headers)).toBe(Object.prototype)
    await loop.drain()
  })
})

describe('bad headers', () => {
  const cases: [string, unknown, RegExp][] = [
    ['not an object', 'x', /^Expected `options.headers` to be an object of string headers, got `"x"`/],
    ['an array', ['a'], /^Expected `options.headers` to be an object of string headers/],
    ['a number value', { a: 1 }, /^Expected `options.headers.a` to be a string of at most 8192 characters/],
    ['a line break', { a: 'x\r\ny: z' }, /without line breaks or NUL/],
    ['a space in a name', { 'a b': 'x' }, /^Expected `options.headers` to be header names of 1 to 256 token/],
    ['an empty name', { '': 'x' }, /header names of 1 to 256 token characters/],
    ['a long value', { a: 'v'.repeat(MAX_HEADER_VALUE + 1) }, /at most 8192 characters/],
    ['too many', Object.fromEntries(Array.from({ length: MAX_HEADERS + 1 }, (_, i) => [`h${i}`, 'v'])), /at most 64/],
  ]
  for (const [what, headers, message] of cases) {
    it(`${what}: InvalidArgumentError, nothing admitted, the refusal counted`, () => {
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      const error = thrown(() => loop.post('work', 1, { headers } as never))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toMatch(message)
      expect(() => loop.tryPost('work', 1, { headers } as never)).toThrow(InvalidArgumentError) // bad input: thrown
      expect(loop.metrics().counters).toMatchObject({ accepted: 0, rejected: 2 })
      expect(loop.metrics().gauges.queued).toBe(0)
    })
  }

  it('a throwing getter in the map is a typed error', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    const headers = {
      get a(): string {
        throw new Error('boom')
      },
    }
    const error = thrown(() => loop.post('work', 1, { headers }))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toMatch(/options\.headers\.a/)
    expect(loop.metrics().counters.accepted).toBe(0)
  })
})

describe('follow-ups', () => {
  it('inherit their parent’s headers; the ones they are given override by name', async () => {
    const { loop } = virtualLoop()
    const seen: unknown[] = []
    loop.on('work', (m, ctx) => {
      seen.push([m.payload, m.hops, { ...m.headers }])
      if (m.payload === 1) ctx.post('work', 2)
      if (m.payload === 2) ctx.post('work', 3, { headers: { tenant: 'b', step: 'three' } })
    })
    loop.post('work', 1, { headers: { tenant: 'a', 'x-correlation-id': 'c-9' } })
    await loop.drain()
    expect(seen).toEqual([
      [1, 0, { tenant: 'a', 'x-correlation-id': 'c-9' }],
      [2, 1, { tenant: 'a', 'x-correlation-id': 'c-9' }],
      [3, 2, { tenant: 'b', 'x-correlation-id': 'c-9', step: 'three' }],
    ])
  })

  it('match a reference model over generated chains of headers (property)', async () => {
    const name = fc.constantFrom('a', 'b', 'c', 'x-id')
    const headers = fc.dictionary(
      name,
      fc.string({ maxLength: 4 }).filter((s) => !/[\r\n\0]/.test(s)),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(headers, { nil: undefined }), { minLength: 1, maxLength: 6 }),
        async (chain) => {
          const { loop } = virtualLoop()
          const seen: MessageHeaders[] = []
          loop.on('work', (m, ctx) => {
            seen.push(m.headers)
            const next = m.payload + 1
            if (next < chain.length) ctx.post('work', next, { headers: chain[next] })
          })
          loop.post('work', 0, { headers: chain[0] })
          await loop.drain()
          let model: Record<string, string> = {}
          chain.forEach((given, i) => {
            model = { ...model, ...given }
            expect(seen[i]).toEqual(model)
          })
        },
      ),
      { numRuns: 100 },
    )
  })
})

describe('stampers', () => {
  it('add headers to every post, from outside and from handlers, in the poster’s async context', async () => {
    const { loop } = virtualLoop()
    const context = new AsyncLocalStorage<string>()
    const calls: unknown[] = []
    loop.stamp((type, headers) => {
      calls.push([type, { ...headers }])
      const span = context.getStore()
      return span === undefined ? undefined : { span }
    })
    const seen: unknown[] = []
    loop.on('work', async (m, ctx) => {
      seen.push([m.payload, { ...m.headers }])
      await context.run(`handler-${m.payload}`, async () => {
        await Promise.resolve()
        if (m.payload === 1) ctx.post('work', 2)
      })
    })
    context.run('producer', () => loop.post('work', 1, { headers: { given: 'g' } }))
    await loop.drain()
    expect(calls).toEqual([
      ['work', { given: 'g' }],
      ['work', { given: 'g', span: 'producer' }], // the follow-up starts from its parent's headers
    ])
    expect(seen).toEqual([
      [1, { given: 'g', span: 'producer' }],
      [2, { given: 'g', span: 'handler-1' }],
    ])
  })

  it('run in registration order, each seeing the one before; plain posts stay allocation-free without them', async () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    const plain = loop.post('work', 0)
    expect(plain.headers).toBe(NO_HEADERS)
    loop.stamp(() => ({ order: 'first', a: '1' }))
    loop.stamp((_type, headers) => ({ order: `${headers['order']}-then-second` }))
    const m = loop.post('work', 1)
    expect(m.headers).toEqual({ order: 'first-then-second', a: '1' })
    await loop.drain()
  })

  it('stamp a waiting send() when it is called, not when room frees', async () => {
    const { loop, clock } = virtualLoop({ capacity: 1, workers: 1, overflow: 'wait' })
    const context = new AsyncLocalStorage<string>()
    loop.stamp(() => ({ by: context.getStore() ?? 'nobody' }))
    const seen: string[] = []
    loop.on('work', async (m) => {
      seen.push(m.headers['by'] as string)
      await clock.sleep(5)
    })
    loop.post('work', 1)
    await clock.advance(0) // 1 runs
    loop.post('work', 2) // fills the queue while 1 runs
    const sent = context.run('sender', () => loop.send('work', 3))
    await clock.run()
    await sent
    await loop.drain()
    expect(seen).toEqual(['nobody', 'nobody', 'sender'])
  })

  it('a stamper that throws refuses the post with a typed error whose cause is what it threw', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    const thrownValue = { not: 'an Error' }
    loop.stamp(() => {
      throw thrownValue
    })
    const error = thrown(() => loop.post('work', 1))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toMatch(/^Expected `stamper` to be a header stamper that returns headers \(it threw\)/)
    expect(error.cause).toBe(thrownValue)
    expect(() => loop.tryPost('work', 1)).toThrow(InvalidArgumentError) // bad input: thrown by tryPost too
    expect(loop.metrics().counters).toMatchObject({ accepted: 0, rejected: 2 })
  })

  it('what a stamper returns is checked', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    loop.stamp(() => ({ bad: 7 }) as unknown as MessageHeaders)
    const error = thrown(() => loop.post('work', 1))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toMatch(/^Expected `the headers a stamper returned.bad` to be a string/)
    expect(loop.metrics().counters.accepted).toBe(0)
  })

  it('stamp() refuses what is not a function', () => {
    const { loop } = virtualLoop()
    const error = thrown(() => loop.stamp('x' as never))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toBe('Expected `stamper` to be a function, got `"x"` (string)')
  })
})

describe('headers travel', () => {
  it('through retries and into the dead letter; a replay carries them', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 2, baseMs: 1, jitter: 0 } })
    const seen: unknown[] = []
    let fail = true
    loop.on('work', (m, ctx) => {
      seen.push([ctx.attempt, m.headers['h']])
      if (fail) throw new Error('nope')
    })
    loop.post('work', 1, { headers: { h: 'kept' } })
    await clock.run()
    await loop.drain()
    const [letter] = loop.deadLetters.list()
    expect(letter?.headers).toEqual({ h: 'kept' })
    fail = false
    loop.replay(letter as never)
    await loop.drain()
    expect(seen).toEqual([
      [1, 'kept'],
      [2, 'kept'],
      [1, 'kept'],
    ])
    const c = loop.metrics().counters
    expect(c.accepted).toBe(ended(c))
  })

  it('through a stop’s snapshot and its restore', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    loop.on('work', () => clock.sleep(100))
    loop.post('work', 1, { headers: { h: 'one' } })
    loop.post('work', 2)
    loop.postDelayed('work', 3, 1000, { headers: { h: 'three' } })
    const stopping = loop.stop({ deadlineMs: 10 })
    await clock.advance(10)
    const snapshot = await stopping
    const waiting = snapshot.messages.filter((m) => m.payload !== 1)
    expect(waiting.map((m) => [m.payload, m.headers])).toEqual([
      [2, undefined],
      [3, { h: 'three' }],
    ])
    const next = virtualLoop()
    const seen: unknown[] = []
    next.loop.on('work', (m) => void seen.push([m.payload, m.headers['h']]))
    next.loop.restore(snapshot)
    await next.clock.run()
    await next.loop.drain()
    expect(seen).toEqual(
      expect.arrayContaining([
        [2, undefined],
        [3, 'three'],
      ]),
    )
  })

  it('restore refuses bad headers in a snapshot', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    const snapshot = {
      format: 'flowing.snapshot',
      version: 1,
      takenAt: Date.now(),
      drained: false,
      messages: [
        {
          id: 'a:1',
          type: 'work',
          payload: 1,
          priority: 5,
          traceId: 'a:1',
          hops: 0,
          state: 'queued',
          attempts: [],
          headers: { a: 1 },
        },
      ],
    }
    const error = thrown(() => loop.restore(snapshot as never))
    expect(error.name).toBe('SnapshotError')
    expect(error.message).toMatch(/messages\[0\]\.headers/)
    expect(loop.metrics().counters.accepted).toBe(0)
  })

  it('through a journal: a new loop on the store runs them with their headers', async () => {
    const store = new MemoryStore('mem')
    const clock = new VirtualClock()
    const first = createLoop<{ job: number }>({ clock, logger: false, store })
    first.on('job', () => {})
    first.start()
    first.pause()
    first.post('job', 1, { headers: { tenant: 't1' } })
    first.post('job', 2)
    await clock.advance(0)
    await clock.advance(0)
    const second = createLoop<{ job: number }>({ clock, logger: false, store })
    const seen: [number, MessageHeaders][] = []
    second.on('job', (m: Message<{ job: number }>) => void seen.push([m.payload, m.headers]))
    second.start()
    await clock.advance(0)
    await second.drain()
    expect(seen).toEqual([
      [1, { tenant: 't1' }],
      [2, {}],
    ])
  })
})
