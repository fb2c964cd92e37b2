import { describe, expect, it, vi } from 'vitest'
import {
  createLoop,
  type DeadLetter,
  type DeadLetterAlert,
  InvalidArgumentError,
  NonRetryableError,
  RetryableError,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('dead letters', () => {
  it('records every attempt with its error, start time and duration', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 100 }, random: () => 0.5 })
    loop.on('work', async (_m, ctx) => {
      await clock.sleep(10 * ctx.attempt)
      throw new RetryableError(`downstream 503 after ${ctx.attempt} tries`)
    })
    const m = loop.post('work', 7, { key: 'k', priority: 2 })
    const letters: DeadLetter[] = []
    loop.events.on('dead-lettered', (_msg, letter) => letters.push(letter))
    await clock.run()
    const letter = loop.deadLetters.get(m.id) as DeadLetter
    expect(letters).toEqual([letter])
    expect(letter).toMatchObject({
      id: m.id,
      type: 'work',
      payload: 7,
      key: 'k',
      priority: 2,
      reason: 'exhausted',
      errorClass: 'retryable',
      at: 10 + 100 + 20 + 200 + 30,
    })
    expect(letter.attempts).toEqual([
      {
        attempt: 1,
        startedAt: 0,
        startedAtEpochMs: Date.UTC(2026, 0, 1) + 0, // the VirtualClock's wall clock
        durationMs: 10,
        outcome: 'failed',
        error: expect.objectContaining({ message: 'downstream 503 after 1 tries' }),
      },
      {
        attempt: 2,
        startedAt: 110,
        startedAtEpochMs: Date.UTC(2026, 0, 1) + 110, // the VirtualClock's wall clock
        durationMs: 20,
        outcome: 'failed',
        error: expect.objectContaining({ name: 'RetryableError' }),
      },
      {
        attempt: 3,
        startedAt: 330,
        startedAtEpochMs: Date.UTC(2026, 0, 1) + 330, // the VirtualClock's wall clock
        durationMs: 30,
        outcome: 'failed',
        error: expect.objectContaining({ errorClass: 'retryable' }),
      },
    ])
    expect(letter.error.signature).toBe('RetryableError: downstream # after # tries')
    expect(JSON.parse(JSON.stringify(letter))).toEqual({ ...letter, key: 'k', routeKey: undefined, ...{} })
    expect(loop.metrics().counters).toMatchObject({ accepted: 1, deadLettered: 1, failed: 3, retried: 2 })
  })

  it('lists by filter, replays with a fresh attempt budget, purges', async () => {
    let healthy = false
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 2, baseMs: 1 }, random: () => 0.5 })
    const attempts: string[] = []
    loop.on('work', (m, ctx) => {
      attempts.push(`${m.payload}#${ctx.attempt}`)
      if (!healthy) throw m.payload % 2 === 0 ? new NonRetryableError(`bad ${m.payload}`) : new Error('flaky')
    })
    for (const i of [1, 2, 3, 4]) loop.post('work', i, { key: `k${i % 2}` })
    await clock.run()
    const store = loop.deadLetters
    expect(store.size).toBe(4)
    expect(store.list({ key: 'k0' }).map((l) => l.payload)).toEqual([2, 4])
    expect(store.list({ signature: 'Error: flaky' }).map((l) => l.payload)).toEqual([1, 3])
    expect(store.list({ limit: 1 }).map((l) => l.payload)).toEqual([2]) // oldest first: 2 failed for good at once
    expect(thrown(() => store.list({ limit: -1 }))).toBeInstanceOf(InvalidArgumentError)

    healthy = true
    attempts.length = 0
    const report = store.replay({ signature: 'Error: flaky' })
    expect(report.refused).toEqual([])
    expect(report.replayed.map((m) => m.payload)).toEqual([1, 3])
    await clock.run()
    expect(attempts).toEqual(['1#1', '3#1']) // a fresh budget: attempt 1 again
    expect(store.size).toBe(2)
    expect(store.purge({ ids: [store.list()[0]?.id as string] })).toBe(1)
    expect(store.purge()).toBe(1)
    expect(store.size).toBe(0)
    expect(loop.metrics().counters).toMatchObject({ accepted: 6, succeeded: 2, deadLettered: 4 })
  })

  it('keeps a letter the loop refuses on replay (a full queue, a stopped loop)', async () => {
    const { loop, clock } = virtualLoop({ capacity: 1, autoStart: false })
    loop.on('work', () => {
      throw new NonRetryableError('no')
    })
    loop.post('work', 1)
    loop.start()
    await clock.run()
    loop.pause()
    loop.post('work', 2) // fills the queue
    const report = loop.deadLetters.replay()
    expect(report.replayed).toEqual([])
    expect(report.refused.map((r) => r.error.name)).toEqual(['QueueFullError'])
    expect(loop.deadLetters.size).toBe(1)
  })

  it('is bounded: past maxSize the oldest letter is evicted and counted', async () => {
    const { loop, clock } = virtualLoop({ deadLetters: { maxSize: 2 } })
    loop.on('work', () => {
      throw new NonRetryableError('no')
    })
    for (const i of [1, 2, 3]) loop.post('work', i)
    await clock.run()
    expect(loop.deadLetters.list().map((l) => l.payload)).toEqual([2, 3])
    expect(loop.deadLetters.evicted).toBe(1)
    expect(loop.metrics().gauges.deadLetters).toBe(2)
  })

  it('hands each letter to a sink, reporting a failing sink as `sink-error`, and replays letters from it', async () => {
    const stored: DeadLetter[] = []
    let fail = false
    const sink = {
      add: (letter: DeadLetter) => {
        if (fail) return Promise.reject(new Error('db down'))
        stored.push(letter)
        return Promise.resolve()
      },
    }
    const { loop, clock } = virtualLoop({ deadLetters: { maxSize: 0, sink } })
    let ok = false
    loop.on('work', () => {
      if (!ok) throw new NonRetryableError('no')
    })
    const errors: unknown[] = []
    loop.events.on('sink-error', (error) => errors.push(error))
    loop.post('work', 1)
    await clock.run()
    fail = true
    loop.post('work', 2)
    await clock.run()
    expect(stored.map((l) => l.payload)).toEqual([1])
    expect(errors).toEqual([new Error('db down')])
    expect(loop.deadLetters.size).toBe(0)
    ok = true
    const replayed = loop.replay(stored[0] as DeadLetter)
    await clock.run()
    expect(loop.trace(replayed.id)).toBeUndefined() // succeeded at once: never traced
    expect(loop.metrics().counters).toMatchObject({ succeeded: 1, deadLettered: 2 })
    const { posted, accepted, rejected } = loop.metrics().counters
    expect(posted).toBe(accepted + rejected) // loop.replay() is a way in: counted as posted
  })

  it('refuses bad dead-letter and alert options with typed errors', () => {
    expect(thrown(() => createLoop({ deadLetters: { maxSize: -1 } })).message).toContain(
      'Expected `options.deadLetters.maxSize` to be a non-negative integer',
    )
    expect(thrown(() => createLoop({ deadLetters: { sink: {} as never } })).message).toContain(
      'Expected `options.deadLetters.sink.add` to be a function',
    )
    expect(thrown(() => createLoop({ alerts: { windowMs: 0 } })).message).toContain(
      'Expected `options.alerts.windowMs` to be a positive finite number of ms, got `0`',
    )
    expect(thrown(() => createLoop({ alerts: { onAlert: 'x' as never } }))).toBeInstanceOf(InvalidArgumentError)
    expect(thrown(() => createLoop({ logger: {} as never })).message).toContain(
      'Expected `options.logger.warn` to be a function',
    )
  })
})

describe('alerts', () => {
  it('alerts once per window per type with counts and top signatures, never once per letter', async () => {
    const alerts: DeadLetterAlert[] = []
    const { loop, clock } = virtualLoop({ alerts: { windowMs: 1000, top: 2, onAlert: (a) => alerts.push(a) } })
    loop.on('work', (m) => {
      throw new NonRetryableError(m.payload % 3 === 0 ? `card ${m.payload} declined` : `row ${m.payload} invalid`)
    })
    loop.on('order.paid', () => {
      throw new NonRetryableError('gone')
    })
    for (let i = 1; i <= 30; i++) loop.post('work', i) // 30 letters at t=0
    loop.post('order.paid', { orderId: 'o', amount: 1 })
    await clock.advance(0)
    expect(alerts.map((a) => [a.type, a.sinceLastAlert])).toEqual([
      ['work', 1],
      ['order.paid', 1],
    ]) // the first letter alerts at once; the other 29 wait for the window
    await clock.advance(500)
    for (let i = 31; i <= 33; i++) loop.post('work', i)
    await clock.advance(499)
    expect(alerts).toHaveLength(2)
    await clock.advance(1)
    expect(alerts).toHaveLength(3)
    expect(alerts[2]).toEqual({
      type: 'work',
      at: 1000,
      windowMs: 1000,
      inWindow: 3, // the 30 letters of t=0 left the window
      sinceLastAlert: 32,
      total: 33,
      topSignatures: [
        { signature: 'NonRetryableError: row # invalid', count: 21 },
        { signature: 'NonRetryableError: card # declined', count: 11 },
      ],
      reason: 'window',
    })
    await clock.run()
    expect(alerts).toHaveLength(3)
    expect(loop.metrics().counters.alerts).toBe(3)
  })

  it('waits for the threshold within the window, and flushes what was not alerted when the loop stops', async () => {
    const alerts: DeadLetterAlert[] = []
    const { loop, clock } = virtualLoop({ alerts: { windowMs: 1000, threshold: 3 } })
    loop.events.on('alert', (a) => alerts.push(a))
    loop.on('work', () => {
      throw new NonRetryableError('x')
    })
    loop.post('work', 1)
    await clock.advance(2000) // one letter: below the threshold
    loop.post('work', 2)
    loop.post('work', 3)
    await clock.advance(0)
    expect(alerts).toEqual([])
    loop.post('work', 4)
    await clock.advance(0)
    expect(alerts.map((a) => [a.inWindow, a.sinceLastAlert, a.reason])).toEqual([[3, 4, 'window']])
    loop.post('work', 5)
    await clock.advance(10)
    await loop.stop()
    expect(alerts.map((a) => [a.sinceLastAlert, a.reason])).toEqual([
      [4, 'window'],
      [1, 'stop'],
    ])
  })

  it('logs a new error signature once, when first seen', async () => {
    const warn = vi.fn()
    const { loop, clock } = virtualLoop({ logger: { warn } })
    const seen: string[] = []
    loop.events.on('signature', (type, error) => seen.push(`${type} ${error.signature}`))
    loop.on('work', (m) => {
      throw new NonRetryableError(m.payload < 3 ? `timeout after ${m.payload} ms` : 'other')
    })
    for (const i of [1, 2, 3, 4]) loop.post('work', i)
    await clock.run()
    expect(seen).toEqual(['work NonRetryableError: timeout after # ms', 'work NonRetryableError: other'])
    expect(warn).toHaveBeenCalledTimes(2)
    expect(warn.mock.calls[0]?.[0]).toMatch(/^\[flowing\] new failure of work: NonRetryableError: timeout after # ms/)
  })
})

describe('Alerts', () => {
  describe('record()', () => {
    it('summarises the rest of a burst when the window allows, even after the burst left the window', async () => {
      const alerts: DeadLetterAlert[] = []
      const { loop, clock } = virtualLoop({ alerts: { windowMs: 60_000 } })
      loop.events.on('alert', (a) => alerts.push(a))
      loop.on('work', () => {
        throw new NonRetryableError('declined')
      })
      for (let i = 1; i <= 100; i++) loop.post('work', i) // 100 letters at t=0
      await clock.advance(120_000)
      expect(alerts.map((a) => [a.at, a.sinceLastAlert, a.total, a.reason])).toEqual([
        [0, 1, 1, 'window'],
        [60_000, 99, 100, 'window'],
      ])
      expect(alerts[1]?.topSignatures).toEqual([{ signature: 'NonRetryableError: declined', count: 99 }])
      expect(clock.pending).toBe(0) // the summary timer fired once and did not re-arm
      await loop.stop()
      expect(alerts).toHaveLength(2) // nothing left for the stop
    })
  })

  describe('flush()', () => {
    it('clears the pending summary timer: a stopped loop leaves no timer behind', async () => {
      const alerts: DeadLetterAlert[] = []
      const { loop, clock } = virtualLoop({ alerts: { windowMs: 60_000 } })
      loop.events.on('alert', (a) => alerts.push(a))
      loop.on('work', () => {
        throw new NonRetryableError('declined')
      })
      for (let i = 1; i <= 5; i++) loop.post('work', i)
      await clock.advance(10)
      expect(clock.pending).toBe(1) // the summary of the 4 suppressed letters, due at 60 000
      const stopped = loop.stop()
      await clock.run()
      await stopped
      expect(clock.pending).toBe(0)
      expect(alerts.map((a) => [a.sinceLastAlert, a.reason])).toEqual([
        [1, 'window'],
        [4, 'stop'],
      ])
    })
  })
})
