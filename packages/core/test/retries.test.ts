import { describe, expect, it } from 'vitest'
import {
  backoff,
  createLoop,
  DEFAULT_RETRY,
  defaultClassify,
  errorSignature,
  HandlerTimeoutError,
  InvalidArgumentError,
  NonRetryableError,
  RetryableError,
  type RetryPolicy,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

const policy = (p: Partial<RetryPolicy>): RetryPolicy => ({ ...DEFAULT_RETRY, ...p })

describe('retry policy', () => {
  it('computes exponential back-off with each jitter strategy, exactly for a given random source', () => {
    const p = policy({ baseMs: 100, factor: 2, capMs: 1000, jitter: 0.3 })
    expect([1, 2, 3, 4, 5].map((n) => backoff(p, n, 0, () => 0.5))).toEqual([100, 200, 400, 800, 1000])
    expect(backoff(p, 1, 0, () => 0)).toBeCloseTo(70) // −30 %
    expect(backoff(p, 1, 0, () => 0.999_999)).toBeCloseTo(130, 3) // +30 %
    expect(backoff(p, 5, 0, () => 0.999_999)).toBe(1000) // capped after jitter
    const full = policy({ baseMs: 100, capMs: 1000, jitterStrategy: 'full' })
    expect(backoff(full, 3, 0, () => 0.25)).toBe(100) // uniform in [0, 400]
    const decorrelated = policy({ baseMs: 100, capMs: 1000, jitterStrategy: 'decorrelated' })
    expect(backoff(decorrelated, 2, 200, () => 0.5)).toBe(350) // uniform in [100, 600]
    expect(backoff(decorrelated, 9, 900, () => 0.9)).toBe(1000) // capped
  })

  it('classifies by default: NonRetryableError, RetryableError, timeouts, a retryable flag, the rest unknown', () => {
    expect(defaultClassify(new NonRetryableError('x'))).toBe('non-retryable')
    expect(defaultClassify(new RetryableError('x'))).toBe('retryable')
    expect(defaultClassify(new HandlerTimeoutError({ label: 't', timeoutMs: 1, elapsedMs: 1 } as never))).toBe(
      'retryable',
    )
    expect(defaultClassify(Object.assign(new Error('503'), { retryable: true }))).toBe('retryable')
    expect(defaultClassify(Object.assign(new Error('400'), { retryable: false }))).toBe('non-retryable')
    expect(defaultClassify(new TypeError('x'))).toBe('unknown')
    expect(defaultClassify('a string')).toBe('unknown')
  })

  it('masks the volatile parts of error messages in signatures', () => {
    expect(errorSignature('Error', 'timeout after 312 ms on "o-81"')).toBe(
      errorSignature('Error', 'timeout after 95 ms on "o-7"'),
    )
    expect(errorSignature('Error', 'row 3f2a1c9e-1111-4a2b-9c3d-0123456789ab gone')).toBe('Error: row <uuid> gone')
    expect(errorSignature('Error', 'x'.repeat(400)).length).toBeLessThanOrEqual(160)
  })

  it('refuses bad policies with typed errors naming the field and the rule, at every level', () => {
    const cases: [unknown, string][] = [
      [{ maxAttempts: 0 }, 'Expected `options.retry.maxAttempts` to be an integer from 1 to 1000000, got `0`'],
      [{ factor: 0.5 }, 'Expected `options.retry.factor` to be a finite number ≥ 1, got `0.5` (number)'],
      [{ jitter: 1.5 }, 'Expected `options.retry.jitter` to be a number in [0, 1], got `1.5` (number)'],
      [{ jitter: -0.1 }, 'Expected `options.retry.jitter` to be a number in [0, 1]'],
      [{ baseMs: 500, capMs: 100 }, 'Expected `options.retry.capMs` to be ≥ baseMs (500 ms), got `100` (number)'],
      [{ jitterStrategy: 'none' }, 'Expected `options.retry.jitterStrategy` to be one of'],
      [{ maxAtempts: 3 }, 'Expected `options.retry.maxAtempts` to be one of the known options'],
    ]
    for (const [retry, message] of cases) {
      const atLoop = thrown(() => createLoop({ retry: retry as never }))
      expect(atLoop).toBeInstanceOf(InvalidArgumentError)
      expect(atLoop.message).toContain(message)
      const { loop } = virtualLoop()
      expect(thrown(() => loop.on('work', () => {}, { retry: retry as never })).message).toContain(message)
      expect(() => loop.post('work', 1)).toThrow('registered types: none') // nothing was registered
      loop.on('work', () => {})
      const atPost = thrown(() => loop.post('work', 1, { retry: retry as never }))
      expect(atPost).toBeInstanceOf(InvalidArgumentError)
      expect(atPost.message).toContain(message)
      expect(loop.metrics().counters).toMatchObject({ accepted: 0, rejected: 2 })
    }
  })

  it('checks capMs ≥ baseMs across levels: a post whose baseMs exceeds the loop cap is refused', () => {
    const { loop } = virtualLoop({ retry: { capMs: 1000 } })
    loop.on('work', () => {})
    expect(thrown(() => loop.post('work', 1, { retry: { baseMs: 5000 } })).message).toContain(
      'Expected `options.retry.capMs` to be ≥ baseMs (5000 ms), got `1000`',
    )
    expect(loop.queued).toBe(0)
  })
})

describe('retries', () => {
  it('re-schedules a failed attempt on the wheel: the worker is free during the back-off', async () => {
    const { loop, clock } = virtualLoop({ workers: 1, retry: { maxAttempts: 3, baseMs: 100 }, random: () => 0.5 })
    const runs: string[] = []
    loop.on('work', (m, ctx) => {
      runs.push(`${m.payload}#${ctx.attempt}@${clock.now()}`)
      if (m.payload === 1 && ctx.attempt < 3) throw new RetryableError('flaky')
    })
    loop.post('work', 1)
    loop.post('work', 2)
    await clock.run()
    expect(runs).toEqual(['1#1@0', '2#1@0', '1#2@100', '1#3@300'])
    expect(loop.metrics().counters).toMatchObject({ succeeded: 2, failed: 2, retried: 2, deadLettered: 0 })
  })

  it('dead-letters non-retryable failures at once and unknown ones after unknownMaxAttempts', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 5, unknownMaxAttempts: 2 }, random: () => 0.5 })
    const attempts = new Map<number, number>()
    loop.on('work', (m, ctx) => {
      attempts.set(m.payload, ctx.attempt)
      if (m.payload === 1) throw new NonRetryableError('bad input')
      if (m.payload === 2) throw new TypeError('who knows')
      throw new RetryableError('down')
    })
    loop.post('work', 1)
    loop.post('work', 2)
    loop.post('work', 3)
    await clock.run()
    expect([...attempts]).toEqual([
      [1, 1],
      [2, 2],
      [3, 5],
    ])
    const letters = loop.deadLetters.list()
    expect(letters.map((l) => [l.payload, l.reason, l.errorClass, l.attempts.length])).toEqual([
      [1, 'non-retryable', 'non-retryable', 1],
      [2, 'exhausted', 'unknown', 2],
      [3, 'exhausted', 'retryable', 5],
    ])
  })

  it('retries handler timeouts (retryable by default), each attempt under its own deadline', async () => {
    const { loop, clock } = virtualLoop({ timeoutMs: 50, retry: { maxAttempts: 2, baseMs: 10 }, random: () => 0.5 })
    const starts: number[] = []
    loop.on('work', async (_m, ctx) => {
      starts.push(clock.now())
      if (ctx.attempt === 1) await clock.sleep(1000)
    })
    loop.post('work', 1)
    await clock.run()
    expect(starts).toEqual([0, 60])
    expect(loop.metrics().counters).toMatchObject({ succeeded: 1, timedOut: 1, retried: 1 })
  })

  it('uses a custom classifier first, falling back to the defaults (a throwing one means unknown)', async () => {
    const { loop, clock } = virtualLoop({
      retry: { maxAttempts: 4, unknownMaxAttempts: 1 },
      random: () => 0.5,
      classify: (error) => {
        if ((error as Error).message === 'explode') throw new Error('classifier bug')
        return (error as Error).message === '503' ? 'retryable' : undefined
      },
    })
    const attempts = new Map<string, number>()
    loop.on('work', (m, ctx) => {
      const message = ['503', 'explode', 'plain'][m.payload] as string
      attempts.set(message, ctx.attempt)
      throw new Error(message)
    })
    for (const i of [0, 1, 2]) loop.post('work', i)
    await clock.run()
    expect(Object.fromEntries(attempts)).toEqual({ '503': 4, explode: 1, plain: 1 })
  })

  it('layers policies: post over type over loop', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 2, baseMs: 10 }, random: () => 0.5 })
    const starts: Record<string, number[]> = { a: [], b: [], c: [] }
    loop.on(
      'order.paid',
      (m) => {
        starts[m.payload.orderId]?.push(clock.now())
        throw new RetryableError('down')
      },
      { retry: { maxAttempts: 3 } },
    )
    loop.post('order.paid', { orderId: 'a', amount: 1 }) // type: 3 attempts, loop's base 10 ms
    loop.post('order.paid', { orderId: 'b', amount: 1 }, { retry: { baseMs: 100 } }) // 3 attempts, 100 ms
    loop.post('order.paid', { orderId: 'c', amount: 1 }, { retry: { maxAttempts: 1 } })
    await clock.run()
    expect(starts).toEqual({ a: [0, 10, 30], b: [0, 100, 300], c: [0] })
  })

  it('keeps per-key order across retries: later messages of the key wait, other keys flow', async () => {
    const { loop, clock } = virtualLoop({ workers: 4, retry: { maxAttempts: 3, baseMs: 100 }, random: () => 0.5 })
    const runs: string[] = []
    loop.on('work', (m, ctx) => {
      runs.push(`${m.key}:${m.payload}#${ctx.attempt}@${clock.now()}`)
      if (m.payload === 1 && ctx.attempt < 3) throw new RetryableError('flaky')
    })
    loop.post('work', 1, { key: 'k' })
    loop.post('work', 2, { key: 'k' })
    loop.post('work', 3, { key: 'other' })
    await clock.advance(0)
    expect(runs).toEqual(['k:1#1@0', 'other:3#1@0']) // k:2 waits behind k:1's back-off
    expect(loop.metrics().gauges).toMatchObject({ retrying: 1, parked: 1, running: 0 })
    await clock.run()
    expect(runs).toEqual(['k:1#1@0', 'other:3#1@0', 'k:1#2@100', 'k:1#3@300', 'k:2#1@300'])
  })

  it('a resumed retry keeps its key until it runs: a later message of the key cannot slip in first', async () => {
    // Found by the ordered-retry property: the key was freed when the back-off ended, so a same-key
    // message still in the ready queue overtook one parked behind the retry.
    const { loop, clock } = virtualLoop({ workers: 1, retry: { maxAttempts: 2, baseMs: 10 }, random: () => 0.5 })
    const runs: string[] = []
    loop.on('work', async (m, ctx) => {
      runs.push(`${m.payload}#${ctx.attempt}`)
      if (m.payload === 0) await clock.sleep(50) // occupies the only worker
      if (m.payload === 1 && ctx.attempt === 1) throw new RetryableError('flaky')
    })
    loop.post('work', 1, { key: 'k', priority: 5 })
    await clock.advance(1) // 1 failed: backing off until 11, holding k
    loop.post('work', 2, { key: 'k', priority: 0 }) // reaches the front first: parked behind k
    loop.post('work', 0) // takes the worker until 51
    loop.post('work', 3, { key: 'k', priority: 0 }) // still in the ready queue when the back-off ends
    await clock.run()
    expect(runs).toEqual(['1#1', '0#1', '1#2', '2#1', '3#1'])
  })

  it('with order: unordered, frees the key during the back-off and re-enters behind newer messages', async () => {
    const { loop, clock } = virtualLoop({
      workers: 1,
      retry: { maxAttempts: 2, baseMs: 100, order: 'unordered' },
      random: () => 0.5,
    })
    const runs: string[] = []
    loop.on('work', async (m, ctx) => {
      runs.push(`${m.payload}#${ctx.attempt}@${clock.now()}`)
      await clock.sleep(100)
      if (m.payload === 1 && ctx.attempt === 1) throw new RetryableError('flaky')
    })
    loop.post('work', 1, { key: 'k' })
    loop.post('work', 2, { key: 'k' })
    loop.post('work', 3, { key: 'k' })
    await clock.run()
    expect(runs).toEqual(['1#1@0', '2#1@100', '3#1@200', '1#2@300'])
  })

  it('a backing-off retry keeps its place in the queue: producers see it, and it re-enters on time', async () => {
    const { loop, clock } = virtualLoop({
      workers: 1,
      capacity: 2,
      retry: { maxAttempts: 2, baseMs: 10 },
      random: () => 0.5,
    })
    const runs: string[] = []
    loop.on('work', async (m, ctx) => {
      runs.push(`${m.payload}#${ctx.attempt}@${clock.now()}`)
      await clock.sleep(50)
      if (m.payload === 1 && ctx.attempt === 1) throw new RetryableError('flaky')
    })
    loop.post('work', 1)
    await clock.advance(50) // 1 failed: backing off 10 ms, holding one of the 2 places
    expect(loop.metrics().gauges).toMatchObject({ queued: 1, retrying: 1 })
    loop.post('work', 2)
    expect(loop.tryPost('work', 3).status).toBe('full') // the retry's place counts
    await clock.advance(10) // due: it re-enters at once, behind 2
    await clock.run()
    expect(runs).toEqual(['1#1@0', '2#1@50', '1#2@100'])
  })

  it('does not deadlock when an ordered retry is due while the queue is full of its own key', async () => {
    // Found in review: the retry waited for room that only its own key's parked messages could free.
    const { loop, clock } = virtualLoop({
      capacity: 3,
      workers: 1,
      retry: { maxAttempts: 2, baseMs: 10 },
      random: () => 0.5,
    })
    const runs: string[] = []
    loop.on('work', (m, ctx) => {
      runs.push(`${m.payload}#${ctx.attempt}`)
      if (m.payload === 1 && ctx.attempt === 1) throw new RetryableError('flaky')
    })
    loop.post('work', 1, { key: 'acct' })
    await clock.advance(0)
    loop.post('work', 2, { key: 'acct' })
    loop.post('work', 3, { key: 'acct' })
    expect(loop.tryPost('work', 4, { key: 'acct' }).status).toBe('full')
    await clock.run()
    expect(runs).toEqual(['1#1', '1#2', '2#1', '3#1'])
  })

  it('a draining stop waits for retries; stop({ drain: false }) cancels them and frees their keys', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 1000 }, random: () => 0.5 })
    let calls = 0
    loop.on('work', () => {
      calls++
      if (calls === 1) throw new RetryableError('flaky')
    })
    loop.post('work', 1, { key: 'k' })
    await clock.advance(0)
    let stopped = false
    const stopping = loop.stop().then(() => {
      stopped = true
    })
    await clock.advance(999)
    expect(stopped).toBe(false)
    await clock.advance(1)
    await stopping
    expect(calls).toBe(2)

    const second = virtualLoop({ retry: { maxAttempts: 3, baseMs: 1000 }, random: () => 0.5 })
    second.loop.on('work', () => {
      throw new RetryableError('down')
    })
    second.loop.post('work', 1, { key: 'k' })
    second.loop.post('work', 2, { key: 'k' })
    await second.clock.advance(0)
    await second.loop.stop({ drain: false })
    expect(second.loop.metrics().counters).toMatchObject({ accepted: 2, cancelled: 2, deadLettered: 0 })
    expect(second.loop.metrics().gauges).toMatchObject({ retrying: 0, busyKeys: 0, queued: 0 })
  })
})
