import { describe, expect, it } from 'vitest'
import {
  type CircuitChange,
  createLoop,
  InvalidArgumentError,
  NonRetryableError,
  RetryableError,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('circuit breakers', () => {
  it('open after consecutive failures and hold the route: no attempt burnt, other types keep flowing', async () => {
    const { loop, clock } = virtualLoop({ workers: 1, circuitBreaker: { consecutiveFailures: 2, cooldownMs: 1000 } })
    let down = true
    const runs: string[] = []
    loop.on('work', (m) => {
      runs.push(`work ${m.payload}@${clock.now()}`)
      if (down) throw new RetryableError('503')
    })
    loop.on('order.paid', (m) => {
      runs.push(`paid ${m.payload.orderId}@${clock.now()}`)
    })
    const changes: CircuitChange[] = []
    loop.events.on('circuit', (c) => changes.push(c))
    for (const i of [1, 2, 3, 4, 5]) loop.post('work', i)
    loop.post('order.paid', { orderId: 'a', amount: 1 })
    await clock.advance(0)
    expect(runs).toEqual(['work 1@0', 'work 2@0', 'paid a@0']) // 3, 4, 5 held after the 2nd failure
    expect(changes.map((c) => [c.route, c.previous, c.state, c.reason, c.held])).toEqual([
      ['work', 'closed', 'open', 'consecutive-failures', 0],
    ])
    expect(loop.metrics().gauges).toMatchObject({ queued: 3, held: 3 })
    expect(loop.metrics().counters).toMatchObject({ failed: 2, deadLettered: 2, held: 3 })
    expect(loop.circuits()).toEqual([{ route: 'work', state: 'open', held: 3 }])

    down = false
    await clock.advance(999)
    expect(runs).toHaveLength(3) // still open: nothing attempted
    await clock.advance(1) // half-open: one probe (the most urgent held message)
    expect(runs.slice(3)).toEqual(['work 3@1000', 'work 4@1000', 'work 5@1000'])
    expect(changes.map((c) => `${c.state}:${c.reason}`)).toEqual([
      'open:consecutive-failures',
      'half-open:cooldown',
      'closed:probes-succeeded',
    ])
    expect(loop.metrics().counters).toMatchObject({ succeeded: 4, deadLettered: 2, failed: 2 })
  })

  it('a failed probe reopens it for another cooldown; held messages never reach the dead-letter store', async () => {
    const { loop, clock } = virtualLoop({
      workers: 2,
      circuitBreaker: { consecutiveFailures: 1, cooldownMs: 100, probes: 2 },
      retry: { maxAttempts: 10, baseMs: 1 },
      random: () => 0.5,
    })
    const attempts: string[] = []
    loop.on('work', (m, ctx) => {
      attempts.push(`${m.payload}#${ctx.attempt}@${clock.now()}`)
      if (clock.now() < 250) throw new RetryableError('down')
    })
    const changes: string[] = []
    loop.events.on('circuit', (c) => changes.push(`${c.state}@${clock.now()}`))
    for (const i of [1, 2, 3, 4]) loop.post('work', i)
    await clock.run()
    expect(changes).toEqual([
      'open@0',
      'half-open@100',
      'open@100',
      'half-open@200',
      'open@200',
      'half-open@300',
      'closed@300',
    ])
    // Only the first attempt and the probes ran. At 100 and 200 the first probe failed and reopened the
    // breaker before the second started, so that one was held again; retries due while open waited, held.
    expect(attempts).toEqual(['1#1@0', '2#1@100', '3#1@200', '4#1@300', '1#2@300', '2#2@300', '3#2@300'])
    expect(loop.metrics().counters).toMatchObject({ succeeded: 4, deadLettered: 0, failed: 3 })
  })

  it('opens on the failure rate in the window once the minimum volume is reached', async () => {
    const { loop, clock } = virtualLoop({
      workers: 1,
      circuitBreaker: { consecutiveFailures: 100, failureRate: 0.5, minVolume: 10, windowMs: 1000, cooldownMs: 500 },
    })
    let n = 0
    loop.on('work', () => {
      n++
      if (n % 2 === 0) throw new RetryableError('every other one')
    })
    const opened: number[] = []
    loop.events.on('circuit', (c) => {
      if (c.state === 'open') opened.push(n)
    })
    for (let i = 0; i < 20; i++) loop.post('work', i)
    await clock.advance(0)
    expect(opened).toEqual([10]) // 5 of 10 failed: 50 %
    expect(loop.metrics().gauges.held).toBe(10)
  })

  it('does not count non-retryable failures: the downstream answered', async () => {
    const { loop, clock } = virtualLoop({ circuitBreaker: { consecutiveFailures: 2 } })
    loop.on('work', () => {
      throw new NonRetryableError('invalid payload')
    })
    for (const i of [1, 2, 3, 4]) loop.post('work', i)
    await clock.run()
    expect(loop.circuits()).toEqual([])
    expect(loop.metrics().counters).toMatchObject({ deadLettered: 4, held: 0 })
  })

  it('per route: one failing route key opens only its own breaker', async () => {
    const { loop, clock } = virtualLoop({ circuitBreaker: { per: 'route', consecutiveFailures: 1, cooldownMs: 100 } })
    const runs: string[] = []
    loop
      .route('order.updated', (m) => m.payload.status)
      .on('paid', (m) => {
        runs.push(`paid ${m.payload.orderId}`)
        throw new RetryableError('ledger down')
      })
      .on('refunded', (m) => {
        runs.push(`refunded ${m.payload.orderId}`)
      })
    for (const id of ['a', 'b']) {
      loop.post('order.updated', { orderId: id, status: 'paid' })
      loop.post('order.updated', { orderId: id, status: 'refunded' })
    }
    await clock.advance(0)
    expect(runs).toEqual(['paid a', 'refunded a', 'refunded b'])
    expect(loop.circuits()).toEqual([{ route: 'order.updated/paid', state: 'open', held: 1 }])
    await loop.stop({ drain: false })
    expect(loop.metrics().counters).toMatchObject({ cancelled: 1, deadLettered: 1, succeeded: 2 })
  })

  it('keeps per-key order while a keyed message is held', async () => {
    const { loop, clock } = virtualLoop({ circuitBreaker: { consecutiveFailures: 1, cooldownMs: 100 } })
    const runs: string[] = []
    let down = true
    loop.on('work', (m) => {
      runs.push(`work ${m.payload}`)
      if (down) throw new RetryableError('503')
    })
    loop.on('order.paid', (m) => {
      runs.push(`paid ${m.payload.orderId}`)
    })
    loop.post('work', 1)
    await clock.advance(0) // opens the breaker
    down = false
    loop.post('work', 2, { key: 'k' })
    loop.post('order.paid', { orderId: 'same key', amount: 1 }, { key: 'k' })
    loop.post('order.paid', { orderId: 'other key', amount: 1 }, { key: 'j' })
    await clock.advance(0)
    expect(runs).toEqual(['work 1', 'paid other key']) // k's second message waits behind the held one
    await clock.run()
    expect(runs).toEqual(['work 1', 'paid other key', 'work 2', 'paid same key'])
  })

  it('bounds a probe by probeTimeoutMs even without a handler deadline', async () => {
    const { loop, clock } = virtualLoop({
      workers: 1,
      circuitBreaker: { consecutiveFailures: 1, cooldownMs: 100, probeTimeoutMs: 50 },
    })
    let calls = 0
    loop.on('work', async () => {
      calls++
      if (calls === 1) throw new RetryableError('503')
      await clock.sleep(10_000) // the probe hangs
    })
    loop.post('work', 1)
    loop.post('work', 2)
    await clock.advance(0)
    const changes: string[] = []
    loop.events.on('circuit', (c) => changes.push(`${c.state}@${clock.now()}`))
    await clock.advance(150)
    expect(changes).toEqual(['half-open@100', 'open@150'])
    expect(loop.metrics().counters).toMatchObject({ timedOut: 1 })
  })

  it('lets a type opt out of, or into, breakers at registration', async () => {
    const { loop, clock } = virtualLoop({ circuitBreaker: { consecutiveFailures: 1 } })
    loop.on(
      'work',
      () => {
        throw new RetryableError('x')
      },
      { circuitBreaker: false },
    )
    for (const i of [1, 2, 3]) loop.post('work', i)
    await clock.run()
    expect(loop.circuits()).toEqual([])

    const other = virtualLoop()
    other.loop.on(
      'work',
      () => {
        throw new RetryableError('x')
      },
      { circuitBreaker: { consecutiveFailures: 2 } },
    )
    for (const i of [1, 2, 3]) other.loop.post('work', i)
    await other.clock.advance(0)
    expect(other.loop.circuits()).toEqual([{ route: 'work', state: 'open', held: 1 }])
  })

  it('refuses bad breaker options with typed errors, at the loop and at registration', () => {
    const cases: [unknown, string][] = [
      [{ failureRate: 0 }, 'Expected `options.circuitBreaker.failureRate` to be a number in (0, 1], got `0`'],
      [{ consecutiveFailures: 0 }, 'Expected `options.circuitBreaker.consecutiveFailures` to be a positive integer'],
      [{ per: 'key' }, 'Expected `options.circuitBreaker.per` to be one of'],
      [{ windowMs: -1 }, 'Expected `options.circuitBreaker.windowMs` to be a positive finite number of ms'],
      [{ probes: 0 }, 'Expected `options.circuitBreaker.probes`'],
      [{ probeTimeoutMs: 0 }, 'Expected `options.circuitBreaker.probeTimeoutMs` to be a positive number of ms'],
      [{ cooldown: 5 }, 'Expected `options.circuitBreaker.cooldown` to be one of the known options'],
    ]
    for (const [breaker, message] of cases) {
      const e = thrown(() => createLoop({ circuitBreaker: breaker as never }))
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect(e.message).toContain(message)
      const { loop } = virtualLoop()
      expect(thrown(() => loop.on('work', () => {}, { circuitBreaker: breaker as never })).message).toContain(message)
    }
  })
})
