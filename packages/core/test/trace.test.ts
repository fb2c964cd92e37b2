import { describe, expect, it } from 'vitest'
import { createLoop, InvalidArgumentError, MAX_TRANSITIONS, RetryableError } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('message traces', () => {
  it('trace a failing message through every state, with its attempts', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 2, baseMs: 100 }, random: () => 0.5 })
    loop.on('work', async () => {
      await clock.sleep(5)
      throw new RetryableError('503')
    })
    const m = loop.post('work', 1, { key: 'k' })
    await clock.advance(3)
    expect(loop.trace(m.id)).toBeUndefined() // running, nothing wrong yet: not traced by default
    await clock.run()
    const t = loop.trace(m.id)
    expect(t).toMatchObject({ id: m.id, type: 'work', key: 'k', state: 'dead-lettered', truncated: 0 })
    expect(t?.transitions).toEqual([
      { state: 'queued', at: 0 },
      { state: 'running', at: 0, attempt: 1 },
      { state: 'failed', at: 5, attempt: 1, detail: 'RetryableError: #' },
      { state: 'retry-scheduled', at: 5, attempt: 2, detail: '100 ms' },
      { state: 'queued', at: 105, attempt: 2 },
      { state: 'running', at: 105, attempt: 2 },
      { state: 'failed', at: 110, attempt: 2, detail: 'RetryableError: #' },
      { state: 'dead-lettered', at: 110, detail: 'exhausted' },
    ])
    expect(t?.attempts.map((a) => [a.attempt, a.startedAt, a.durationMs, a.outcome])).toEqual([
      [1, 0, 5, 'failed'],
      [2, 105, 5, 'failed'],
    ])
  })

  it('records held and timed-out states', async () => {
    const { loop, clock } = virtualLoop({
      workers: 1,
      timeoutMs: 10,
      circuitBreaker: { consecutiveFailures: 1, cooldownMs: 50 },
    })
    loop.on('work', async (m, ctx) => {
      // 1 hangs until its deadline aborts it, and then gives its worker back at once.
      if (m.payload === 1) await new Promise((_, reject) => ctx.signal.addEventListener('abort', reject))
    })
    loop.post('work', 1)
    const second = loop.post('work', 2)
    await clock.run()
    expect(loop.trace(second.id)?.transitions.map((t) => t.state)).toEqual([
      'queued',
      'held',
      'queued',
      'running',
      'succeeded',
    ])
    const first = loop.trace(`${second.id.split(':')[0]}:1`)
    expect(first?.attempts[0]?.outcome).toBe('timed-out')
    expect(first?.transitions.map((t) => t.state)).toEqual(['queued', 'running', 'timed-out', 'dead-lettered'])
  })

  it("traces every message with traces: 'all', delayed and dropped ones included", async () => {
    const { loop, clock } = virtualLoop({ traces: 'all', capacity: 1, overflow: 'drop-new', autoStart: false })
    loop.on('work', () => {})
    const a = loop.post('work', 1)
    const b = loop.tryPost('work', 2)
    const d = loop.postDelayed('work', 3, 50)
    loop.start()
    await clock.run()
    expect(loop.trace(a.id)?.transitions.map((t) => t.state)).toEqual(['queued', 'running', 'succeeded'])
    expect(b.ok).toBe(false)
    expect(loop.trace((b as { message: { id: string } }).message.id)?.state).toBe('dropped')
    expect(loop.trace(d.message.id)?.transitions.map((t) => [t.state, t.at])).toEqual([
      ['delayed', 0],
      ['queued', 50],
      ['running', 50],
      ['succeeded', 50],
    ])
    expect(loop.trace(a.id)?.attempts).toEqual([
      { attempt: 1, startedAt: 0, startedAtEpochMs: Date.UTC(2026, 0, 1), durationMs: 0, outcome: 'succeeded' },
    ])
  })

  it('keeps the most recent keepTraces finished traces, and bounds transitions per message', async () => {
    const { loop, clock } = virtualLoop({ traces: 'all', keepTraces: 2 })
    loop.on('work', () => {})
    const ids = [1, 2, 3].map((i) => loop.post('work', i).id)
    await clock.run()
    expect(ids.map((id) => loop.trace(id)?.state)).toEqual([undefined, 'succeeded', 'succeeded'])
    expect(loop.trace('not-an-id')).toBeUndefined()
    expect(MAX_TRANSITIONS).toBe(64)
  })

  it('refuses bad trace options with typed errors', () => {
    expect(thrown(() => createLoop({ traces: 'some' as never }))).toBeInstanceOf(InvalidArgumentError)
    expect(thrown(() => createLoop({ keepTraces: -1 })).message).toContain(
      'Expected `options.keepTraces` to be a non-negative integer',
    )
  })
})
