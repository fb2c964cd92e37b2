/**
 * The hands other processes (and operators) have on a loop's flow control: `openCircuit` /
 * `closeCircuit` force a breaker whatever its counts say, `shareRateLimits(n)` divides the
 * budgets among `n` processes sharing the downstreams, and `pauseRoute` applies another process's
 * "too many requests" here.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type CircuitChange,
  createLoop,
  InvalidArgumentError,
  RateLimitError,
  type RateLimitHold,
  UnknownMessageTypeError,
  VirtualClock,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('openCircuit() / closeCircuit()', () => {
  it('holds a type at once without a failure, half-opens after the cooldown given, and a probe closes it', async () => {
    const { loop, clock } = virtualLoop({ workers: 2, circuitBreaker: { cooldownMs: 10_000 } })
    const runs: string[] = []
    loop.on('work', (m) => void runs.push(`${m.payload}@${clock.now()}`))
    const changes: CircuitChange[] = []
    loop.events.on('circuit', (c) => changes.push(c))
    loop.controls.openCircuit('work', { cooldownMs: 500 })
    for (const i of [1, 2, 3]) loop.post('work', i)
    await clock.advance(499)
    expect(runs).toEqual([])
    expect(loop.circuits()).toEqual([{ route: 'work', state: 'open', held: 3 }])
    await clock.advance(1)
    expect(runs).toEqual(['1@500', '2@500', '3@500'])
    expect(changes.map((c) => `${c.previous}>${c.state}:${c.reason}:${c.cooldownMs ?? '-'}`)).toEqual([
      'closed>open:forced:500',
      'open>half-open:cooldown:-',
      'half-open>closed:probes-succeeded:-',
    ])
  })

  it('closes an open breaker at once, releasing what it held in post order; a closed one stays as it is', async () => {
    const { loop, clock } = virtualLoop({ workers: 1, circuitBreaker: true })
    const runs: number[] = []
    loop.on('work', (m) => void runs.push(m.payload as number))
    const changes: string[] = []
    loop.events.on('circuit', (c) => changes.push(`${c.previous}>${c.state}:${c.reason}`))
    loop.controls.closeCircuit('work') // closed already: no change
    loop.controls.openCircuit('work')
    loop.controls.openCircuit('work', { cooldownMs: 1 }) // open already: stays, with its own cooldown
    for (const i of [1, 2, 3]) loop.post('work', i)
    await clock.advance(10)
    expect(runs).toEqual([])
    loop.controls.closeCircuit('work')
    await clock.advance(0)
    expect(runs).toEqual([1, 2, 3])
    expect(changes).toEqual(['closed>open:forced', 'open>closed:forced'])
    await clock.advance(60_000) // the cooldown's timer was cleared: no half-open later
    expect(changes).toHaveLength(2)
  })

  it('forces one route of a per-route breaker, leaving the others flowing', async () => {
    const { loop, clock } = virtualLoop({ workers: 4, circuitBreaker: { per: 'route', cooldownMs: 100 } })
    const runs: string[] = []
    loop
      .route('order.updated', (m) => m.payload.status)
      .on('paid', (m) => void runs.push(`paid ${m.payload.orderId}`))
      .on('refunded', (m) => void runs.push(`refunded ${m.payload.orderId}`))
    loop.controls.openCircuit('order.updated', { routeKey: 'paid' })
    for (const id of ['a', 'b']) {
      loop.post('order.updated', { orderId: id, status: 'paid' })
      loop.post('order.updated', { orderId: id, status: 'refunded' })
    }
    await clock.advance(0)
    expect(runs).toEqual(['refunded a', 'refunded b'])
    expect(loop.circuits()).toEqual([{ route: 'order.updated/paid', state: 'open', held: 2 }])
    await clock.advance(100)
    expect(runs).toEqual(['refunded a', 'refunded b', 'paid a', 'paid b'])
  })

  it('refuses a type without a breaker and bad options with InvalidArgumentError, changing nothing', () => {
    const { loop } = virtualLoop({ workers: 1 })
    loop.on('work', () => {})
    loop.on('order.paid', () => {}, { circuitBreaker: true })
    const cases: [() => unknown, string][] = [
      [() => loop.controls.openCircuit('work'), 'type'],
      [() => loop.controls.openCircuit(42 as unknown as 'work'), 'type'],
      [() => loop.controls.openCircuit('order.paid', { cooldownMs: -1 }), 'options.cooldownMs'],
      [() => loop.controls.openCircuit('order.paid', { cooldownMs: Number.NaN }), 'options.cooldownMs'],
      [() => loop.controls.openCircuit('order.paid', { routeKey: 7 as unknown as string }), 'options.routeKey'],
      [() => loop.controls.openCircuit('order.paid', { coolDownMs: 5 } as never), 'coolDownMs'],
      [() => loop.controls.closeCircuit('order.paid', { cooldownMs: 5 } as never), 'cooldownMs'],
      [() => loop.controls.closeCircuit('order.paid', 'x' as never), 'options'],
    ]
    for (const [call, names] of cases) {
      const error = thrown(call)
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as Error).message).toContain(names)
    }
    // A type nothing handles is an unknown type, as everywhere.
    expect(thrown(() => loop.controls.closeCircuit('nope' as 'work'))).toBeInstanceOf(UnknownMessageTypeError)
    expect(loop.circuits()).toEqual([])
  })
})

describe('shareRateLimits()', () => {
  it('gives each of n processes ⌊max / n⌋ starts per window (at least 1), but a budget per key all of its max', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<{ typed: number; keyed: number; tiny: number }>({ clock, workers: 16, logger: false })
    const starts: Record<string, number> = {}
    const count = (k: string) => () => {
      starts[k] = (starts[k] ?? 0) + 1
    }
    loop.on('typed', count('typed'), { rateLimit: { max: 10, perMs: 1000 } })
    loop.on('keyed', count('keyed'), { rateLimit: { max: 4, perMs: 1000, per: 'key' } })
    loop.on('tiny', count('tiny'), { rateLimit: { max: 2, perMs: 1000 } })
    loop.controls.shareRateLimits(3)
    for (let i = 0; i < 20; i++) {
      loop.post('typed', i)
      loop.post('keyed', i, { key: 'k' })
      loop.post('tiny', i)
    }
    await clock.advance(0)
    expect(starts).toEqual({ typed: 3, keyed: 4, tiny: 1 })
    loop.controls.shareRateLimits(1) // the others left: the whole budget again, at once
    await clock.advance(0)
    expect(starts).toEqual({ typed: 10, keyed: 4, tiny: 2 })
  })

  it('keeps the sum of n shares within max in every window (property, on virtual time)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 6 }), async (max, n) => {
        const loops = Array.from({ length: n }, () => virtualLoop({ workers: 64 }))
        const starts: number[] = []
        for (const { loop, clock } of loops) {
          loop.on('work', () => void starts.push(clock.now()), { rateLimit: { max, perMs: 100 } })
          loop.controls.shareRateLimits(n)
          for (let i = 0; i < 2 * max; i++) loop.post('work', i)
        }
        for (const { clock } of loops) await clock.advance(250)
        const inFirstWindow = starts.filter((t) => t < 100).length
        expect(inFirstWindow).toBe(Math.max(1, Math.floor(max / n)) * n)
        if (max >= n) expect(inFirstWindow).toBeLessThanOrEqual(max)
      }),
      { numRuns: 60 },
    )
  })

  it('refuses a count that is not a positive integer, keeping the budgets', async () => {
    const { loop, clock } = virtualLoop({ workers: 4 })
    let n = 0
    loop.on('work', () => void n++, { rateLimit: { max: 4, perMs: 1000 } })
    for (const bad of [0, -1, 1.5, Number.NaN, '2', undefined]) {
      const error = thrown(() => loop.controls.shareRateLimits(bad as number))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as Error).message).toContain('processes')
    }
    for (let i = 0; i < 8; i++) loop.post('work', i)
    await clock.advance(0)
    expect(n).toBe(4)
  })
})

describe('pauseRoute()', () => {
  it('pauses the route as a 429 would, with no message of its own; the route resumes, throttled, after the wait', async () => {
    const { loop, clock } = virtualLoop({ workers: 4 })
    const runs: string[] = []
    loop.on('work', (m) => void runs.push(`${m.payload}@${clock.now()}`))
    loop.on('order.paid', (m) => void runs.push(`other ${m.payload.orderId}@${clock.now()}`))
    const holds: RateLimitHold[] = []
    loop.events.on('rate-limited', (_m, hold) => holds.push(hold))
    loop.controls.pauseRoute('work', { retryAfterMs: 300 })
    loop.controls.pauseRoute('work', { retryAfterMs: 100 }) // a shorter one: the longer pause stays
    loop.post('work', 1)
    loop.post('order.paid', { orderId: '1', amount: 1 })
    await clock.advance(299)
    expect(runs).toEqual(['other 1@0'])
    await clock.advance(1)
    expect(runs).toEqual(['other 1@0', '1@300'])
    expect(holds).toEqual([
      {
        limit: 'retry-after:work',
        scope: 'retry-after',
        until: 300,
        perSecond: expect.any(Number),
        retryAfterScope: 'route',
      },
    ]) // no `retryAfterMs`: no handler of this loop was refused
  })

  it('pauses one route of a type routed by key, the others flowing', async () => {
    const { loop, clock } = virtualLoop({ workers: 4 })
    const runs: string[] = []
    loop
      .route('order.updated', (m) => m.payload.status)
      .on('paid', (m) => void runs.push(`paid ${m.payload.orderId}@${clock.now()}`))
      .on('refunded', (m) => void runs.push(`refunded ${m.payload.orderId}@${clock.now()}`))
    loop.controls.pauseRoute('order.updated', { routeKey: 'paid', retryAfterMs: 50 })
    loop.post('order.updated', { orderId: 'a', status: 'paid' })
    loop.post('order.updated', { orderId: 'b', status: 'refunded' })
    await clock.advance(50)
    expect(runs).toEqual(['refunded b@0', 'paid a@50'])
  })

  it('marks the hold of the message a handler’s RateLimitError refused with the wait it asked for', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    let first = true
    loop.on('work', () => {
      if (first) {
        first = false
        throw new RateLimitError('429', { retryAfterMs: 200 })
      }
    })
    const holds: { id: number; hold: RateLimitHold }[] = []
    loop.events.on('rate-limited', (m, hold) => holds.push({ id: m.payload as number, hold }))
    loop.post('work', 1)
    await clock.advance(0)
    loop.post('work', 2)
    await clock.advance(0)
    expect(holds.map((h) => [h.id, h.hold.retryAfterMs, h.hold.until])).toEqual([
      [1, 200, 200],
      [2, undefined, 200],
    ])
  })

  it('refuses bad arguments with InvalidArgumentError (and an unknown type), changing nothing', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    let n = 0
    loop.on('work', () => void n++)
    const cases: [() => unknown, string][] = [
      [() => loop.controls.pauseRoute('work', { retryAfterMs: 0 }), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', { retryAfterMs: -5 }), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', { retryAfterMs: Number.NaN }), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', { retryAfterMs: Number.POSITIVE_INFINITY }), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', { retryAfterMs: 86_400_001 }), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', {} as never), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', undefined as never), 'options'],
      [
        () => loop.controls.pauseRoute('work', { retryAfterMs: 5, routeKey: 7 as unknown as string }),
        'options.routeKey',
      ],
      [() => loop.controls.pauseRoute('work', { retryAfter: 5 } as never), 'retryAfter'],
      [() => loop.controls.pauseRoute(42 as unknown as 'work', { retryAfterMs: 5 }), 'type'],
    ]
    const throwing = {
      get retryAfterMs(): number {
        throw new Error('boom')
      },
    }
    const trap = new Proxy(
      { retryAfterMs: 5 },
      {
        ownKeys: () => {
          throw new Error('trap')
        },
      },
    )
    cases.push(
      [() => loop.controls.pauseRoute('work', throwing), 'options.retryAfterMs'],
      [() => loop.controls.pauseRoute('work', trap), 'options'],
      [() => loop.controls.openCircuit('work', throwing as never), 'options'],
    )
    for (const [call, names] of cases) {
      const error = thrown(call)
      expect(error, names).toBeInstanceOf(InvalidArgumentError)
      expect((error as Error).message).toContain(names)
    }
    expect(thrown(() => loop.controls.pauseRoute('nope' as 'work', { retryAfterMs: 5 }))).toBeInstanceOf(
      UnknownMessageTypeError,
    )
    loop.post('work', 1)
    await clock.advance(0)
    expect(n).toBe(1)
  })
})
