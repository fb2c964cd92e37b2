import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest'
import {
  CircuitOpenError,
  InvalidArgumentError,
  RetryableError,
  SendTimeoutError,
  TimeoutBreakerOpenError,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

// The deprecation warnings emitted, as [message, code].
let warnings: MockInstance<typeof process.emitWarning>
const codes = () => warnings.mock.calls.map((call) => (call[1] as { code?: string } | undefined)?.code)

beforeEach(() => {
  warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
})
afterEach(() => {
  warnings.mockRestore()
})

describe('renamed options keep working under their old names, with one deprecation warning each', () => {
  it('createLoop({ breaker }) is circuitBreaker; both at once are refused', async () => {
    const { loop, clock } = virtualLoop({ breaker: { consecutiveFailures: 1, cooldownMs: 100 } })
    const changes: string[] = []
    loop.events.on('circuit', (c) => changes.push(c.state))
    loop.on('work', () => {
      throw new RetryableError('down')
    })
    loop.post('work', 1)
    await clock.advance(0)
    expect(changes).toEqual(['open'])
    expect(loop.circuits()).toHaveLength(1)
    virtualLoop({ breaker: true }) // a second use: no second warning
    expect(codes()).toEqual(['FLOWING_DEP_BREAKER'])
    expect(warnings.mock.calls[0]?.[0]).toBe(
      '`options.breaker` is deprecated: use `options.circuitBreaker` (same meaning).',
    )
    const both = thrown(() => virtualLoop({ breaker: true, circuitBreaker: true }))
    expect(both).toBeInstanceOf(InvalidArgumentError)
    expect(both.message).toBe(
      'Expected `options.breaker` to be absent when `options.circuitBreaker` is given (`breaker` is its deprecated name), got `true` (boolean)',
    )
  })

  it('on(type, h, { breaker }) is circuitBreaker', async () => {
    const { loop, clock } = virtualLoop()
    loop.on(
      'work',
      () => {
        throw new RetryableError('down')
      },
      { breaker: { consecutiveFailures: 1, cooldownMs: 100 } },
    )
    loop.post('work', 1)
    await clock.advance(0)
    expect(loop.circuits().map((c) => c.state)).toEqual(['open'])
    expect(codes()).toEqual(['FLOWING_DEP_ON_BREAKER'])
    const both = thrown(() => loop.on('order.paid', () => {}, { breaker: true, circuitBreaker: false }))
    expect(both).toBeInstanceOf(InvalidArgumentError)
    expect((both as InvalidArgumentError).argument).toBe('options.breaker')
  })

  it('backpressure: { breaker } is admissionBreaker; both at once are refused under the full path', () => {
    const { loop } = virtualLoop({ backpressure: { breaker: { cooldownMs: 5, probes: 1 } } })
    expect(loop.metrics().backpressure?.breaker).toBeDefined()
    expect(codes()).toEqual(['FLOWING_DEP_ADMISSION_BREAKER'])
    const both = thrown(() => virtualLoop({ backpressure: { breaker: false, admissionBreaker: {} } }))
    expect(both).toBeInstanceOf(InvalidArgumentError)
    expect((both as InvalidArgumentError).argument).toBe('options.backpressure.breaker')
    const off = virtualLoop({ backpressure: { admissionBreaker: false } }).loop
    expect(off.metrics().backpressure?.breaker).toBeUndefined()
  })

  it("send()'s timeoutMs is waitTimeoutMs; both at once are refused", async () => {
    const { loop, clock } = virtualLoop({ capacity: 1, overflow: 'wait', autoStart: false })
    loop.on('work', () => undefined)
    loop.post('work', 1)
    const sent = expect(loop.send('work', 2, { timeoutMs: 20 })).rejects.toBeInstanceOf(SendTimeoutError)
    await clock.advance(20)
    await sent
    expect(codes()).toEqual(['FLOWING_DEP_SEND_TIMEOUT'])
    const both = loop.send('work', 3, { timeoutMs: 5, waitTimeoutMs: 5 })
    await expect(both).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(both).rejects.toThrow('`options.timeoutMs` to be absent when `options.waitTimeoutMs` is given')
    expect(loop.metrics().counters.accepted).toBe(1) // nothing half-done
  })
})

describe('renamed events and errors', () => {
  it('the timeout breaker reports as timeout-breaker, and still as breaker (which warns when subscribed)', async () => {
    const { loop, clock } = virtualLoop({
      timeoutBreaker: { threshold: 1, cooldownMs: 100 },
      timeoutMs: 10,
      graceMs: 0,
    })
    const seen: string[] = []
    loop.events.on('timeout-breaker', (c) => seen.push(`timeout-breaker ${c.state}`))
    expect(codes()).toEqual([])
    loop.events.on('breaker', (c) => seen.push(`breaker ${c.state}`))
    expect(codes()).toEqual(['FLOWING_DEP_BREAKER_EVENT'])
    loop.on('work', () => clock.sleep(50))
    loop.post('work', 1)
    await clock.advance(10)
    expect(seen).toEqual(['timeout-breaker open', 'breaker open'])
    const refused = thrown(() => loop.post('work', 2))
    expect(refused).toBeInstanceOf(TimeoutBreakerOpenError)
    expect(refused).toBeInstanceOf(CircuitOpenError) // the old name is the same class
    expect(refused).toMatchObject({ name: 'TimeoutBreakerOpenError', code: 'ERR_FLOWING_CIRCUIT_OPEN' })
  })

  it('suggests the new name for a typo of it', () => {
    expect(thrown(() => virtualLoop({ circuitBreakr: true } as never)).message).toContain(
      'did you mean `circuitBreaker`',
    )
    expect(thrown(() => virtualLoop({ backpressure: { admisionBreaker: false } as never })).message).toContain(
      'did you mean `admissionBreaker`',
    )
  })
})
