/**
 * Breakers and rate limits shared by the processes of one loop (two loops of one name on a private
 * server, each on its own connection): a breaker that trips in one process opens in the other for the
 * rest of its cooldown, and closes there when the first one's probes succeed; a downstream's "too many
 * requests" to one process pauses the route in the other until the same time; a rate limit is divided
 * among the live processes, so together they stay within it.
 */
import { type CircuitChange, RateLimitError, type RateLimitHold, RetryableError } from '@flowing/core'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop, type NatsLoopOptions } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'
import { until } from './until.js'

interface Messages {
  call: { n: number }
  tick: { n: number }
}

describeNats('breakers and rate limits shared across processes', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  let names = 0
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
  })
  const pair = async (o: Partial<NatsLoopOptions> = {}) => {
    const name = `shared${names++}`
    const make = () =>
      createNatsLoop<Messages>({ servers: server().url, name, partitions: 4, loop: { logger: false }, ...o })
    const loops = [await make(), await make()] as const
    open.push(...loops)
    return loops
  }
  const bothOwn = (a: NatsLoop<Messages>, b: NatsLoop<Messages>) =>
    a.metrics().partitions === 2 && b.metrics().partitions === 2

  it('opens a breaker in the other process when it trips in one, and closes it there after the probes', async () => {
    const [a, b] = await pair()
    const breaker = { consecutiveFailures: 2, cooldownMs: 1500 }
    let down = true
    const ran = { a: 0, b: 0 }
    a.on(
      'call',
      () => {
        ran.a++
        if (down) throw new RetryableError('503')
      },
      { circuitBreaker: breaker },
    )
    b.on('call', () => void ran.b++, { circuitBreaker: breaker })
    const changes: { who: string; change: CircuitChange; at: number }[] = []
    a.events.on('circuit', (change) => changes.push({ who: 'a', change, at: Date.now() }))
    b.events.on('circuit', (change) => changes.push({ who: 'b', change, at: Date.now() }))
    await a.start()
    await b.start()
    await until(() => bothOwn(a, b), 15_000, 'both own partitions')
    // Messages on every partition until a's own failures trip its breaker.
    for (let n = 0; !changes.some((c) => c.who === 'a'); n++) {
      await a.post('call', { n }, { key: `k${n}` })
      await new Promise((r) => setTimeout(r, 5))
    }
    const tripped = changes.find((c) => c.who === 'a')
    expect(tripped?.change).toMatchObject({ state: 'open', reason: 'consecutive-failures', cooldownMs: 1500 })
    await until(() => changes.some((c) => c.who === 'b'), 2000, "b's breaker following a's")
    const followed = changes.find((c) => c.who === 'b')
    expect(followed?.change).toMatchObject({ route: 'call', state: 'open', reason: 'forced' })
    expect((followed?.at ?? 0) - (tripped?.at ?? 0)).toBeLessThan(1000)
    // While open, b holds its messages of the type (it had no failure of its own).
    const ranB = ran.b
    for (let n = 1000; n < 1010; n++) await a.post('call', { n }, { key: `k${n}` })
    await new Promise((r) => setTimeout(r, 300))
    expect(ran.b).toBe(ranB)
    expect(b.local.circuits()).toEqual([expect.objectContaining({ route: 'call', state: 'open' })])
    down = false
    await Promise.all([a.drain(), b.drain()])
    expect(a.local.circuits()).toEqual([])
    expect(b.local.circuits()).toEqual([])
    expect(ran.b).toBeGreaterThan(ranB)
  }, 30_000)

  it('follows a breaker already open when it starts', async () => {
    const [a, b] = await pair()
    const breaker = { consecutiveFailures: 1, cooldownMs: 5000 }
    a.on('call', () => Promise.reject(new RetryableError('503')), { circuitBreaker: breaker })
    b.on('call', () => {}, { circuitBreaker: breaker })
    await a.start()
    await a.post('call', { n: 0 }, { key: 'k' })
    await until(() => a.local.circuits().length === 1, 5000, "a's breaker")
    const forced: CircuitChange[] = []
    b.events.on('circuit', (c) => forced.push(c))
    await b.start()
    await until(() => forced.length === 1, 2000, "b's breaker")
    expect(forced[0]).toMatchObject({ state: 'open', reason: 'forced' })
    expect(forced[0]?.cooldownMs).toBeGreaterThan(3000)
    expect(forced[0]?.cooldownMs).toBeLessThanOrEqual(5000)
  }, 20_000)

  it('pauses the route in the other process until the same time when one receives a 429', async () => {
    const [a, b] = await pair()
    const calls: { who: string; at: number }[] = []
    let refused = false
    a.on('call', () => {
      calls.push({ who: 'a', at: Date.now() })
      if (!refused) {
        refused = true
        throw new RateLimitError('429', { retryAfterMs: 4000 })
      }
    })
    b.on('call', () => void calls.push({ who: 'b', at: Date.now() }))
    const holds: { who: string; hold: RateLimitHold }[] = []
    a.events.on('rate-limited', (_m, hold) => holds.push({ who: 'a', hold }))
    b.events.on('rate-limited', (_m, hold) => holds.push({ who: 'b', hold }))
    await a.start()
    await b.start()
    await until(() => bothOwn(a, b), 15_000, 'both own partitions')
    // One message per key until a has been refused (its partitions: a's handler runs them).
    for (let n = 0; !refused; n++) {
      await a.post('call', { n }, { key: `k${n}` })
      await new Promise((r) => setTimeout(r, 5))
    }
    const refusedAt = (calls.find((c) => c.who === 'a') as { at: number }).at
    // b, told through the bucket, pauses the route too: its messages wait for the end of a's pause.
    const paused = () => b.local.inspect().limits.some((l) => l.name === 'retry-after:call' && l.until !== undefined)
    await until(paused, 3_000, "b's pause")
    const before = calls.length
    await Promise.all(Array.from({ length: 8 }, (_, n) => a.post('call', { n: 100 + n }, { key: `j${n}` })))
    await until(() => calls.length === before + 8 + 1, 20_000, 'every call after the pause') // + a's refused one
    const after = calls.slice(before)
    expect(after.filter((c) => c.who === 'b').length).toBeGreaterThan(0)
    for (const c of after) expect(c.at).toBeGreaterThanOrEqual(refusedAt + 4000 - 50)
    const bHold = holds.find((h) => h.who === 'b')?.hold
    expect(bHold).toMatchObject({ scope: 'retry-after', retryAfterScope: 'route', limit: 'retry-after:call' })
    expect(bHold?.retryAfterMs).toBeUndefined() // followed, not b's own refusal: not shared back
  }, 40_000)

  it('divides a rate limit between the live processes: together they stay within it', async () => {
    const [a, b] = await pair()
    const starts: number[] = []
    const rateLimit = { max: 10, perMs: 1000 }
    for (const loop of [a, b]) loop.on('tick', () => void starts.push(Date.now()), { rateLimit })
    await a.start()
    await b.start()
    await until(() => bothOwn(a, b), 15_000, 'both own partitions')
    await Promise.all(Array.from({ length: 40 }, (_, n) => a.post('tick', { n }, { key: `k${n}` })))
    await until(() => starts.length === 40, 20_000, 'every tick')
    starts.sort((x, y) => x - y)
    // No window of a second holds more than max starts (each process: ⌊10 / 2⌋ = 5); the margin is
    // the handlers' `Date.now()` against the limiter's monotonic clock.
    for (let i = 0; i + 10 < starts.length; i++) {
      expect((starts[i + 10] as number) - (starts[i] as number)).toBeGreaterThanOrEqual(990)
    }
    // Both ran their share: about two seconds a 20, not four.
    expect((starts[39] as number) - (starts[0] as number)).toBeLessThan(6000)
  }, 40_000)
})
