/**
 * User code calling back into the loop from its listeners — cancelling, stopping, restoring — while the
 * loop is in the middle of a step (a wheel batch, a breaker half-opening, an attempt starting, a
 * restore, an eviction): every message still ends exactly once, and the stop leaves nothing armed.
 */
import { describe, expect, it } from 'vitest'
import { type LoopSnapshot, RetryableError } from '../src/index.js'
import { ended, virtualLoop } from './fixtures.js'

describe('listeners that call back into the loop', () => {
  it('a handle.cancel() from a listener in the same wheel batch cancels that message: it does not run', async () => {
    const { loop, clock } = virtualLoop()
    const out: string[] = []
    loop.events.on('succeeded', (m) => {
      out.push(`${m.payload}:succeeded`)
    })
    loop.events.on('cancelled', (m) => {
      out.push(`${m.payload}:cancelled`)
    })
    loop.on('work', () => {})
    loop.postDelayed('work', 1, 10)
    const second = loop.postDelayed('work', 2, 10)
    loop.events.on('posted', (m) => {
      if (m.payload === 1) second.cancel()
    })
    await clock.run()
    expect(out).toEqual(['2:cancelled', '1:succeeded']) // before the fix: [2:cancelled, 1:succeeded, 2:succeeded]
  })

  it('retries due in one wheel batch, a requeued listener stopping with deadline 0: each is handed back once', async () => {
    const { loop, clock } = virtualLoop({ workers: 2, retry: { maxAttempts: 2, baseMs: 10 }, random: () => 0.5 })
    loop.on('work', (_m, ctx) => {
      if (ctx.attempt === 1) throw new RetryableError('503')
    })
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('requeued', () => {
      stopped ??= loop.stop({ deadlineMs: 0 })
    })
    loop.post('work', 1)
    loop.post('work', 2)
    await clock.run()
    const snap = (await stopped) as LoopSnapshot
    // before the fix: 1:queued, 2:retry-scheduled, 2:queued — message 2 handed back twice; accepted 2, ended 3
    expect(snap.messages.map((m) => `${m.payload}:${m.state}`)).toEqual(['1:queued', '2:retry-scheduled'])
  })

  it('a circuit listener stopping the loop while the breaker half-opens: the cancelled held message does not run', async () => {
    const { loop, clock } = virtualLoop({
      circuitBreaker: { consecutiveFailures: 1, cooldownMs: 100 },
      retry: { maxAttempts: 1 },
    })
    let n = 0
    loop.on('work', () => {
      if (n++ === 0) throw new RetryableError('503')
    })
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('circuit', (c) => {
      if (c.state === 'half-open') stopped = loop.stop({ drain: false })
    })
    loop.post('work', 1)
    await clock.advance(1)
    loop.post('work', 2)
    loop.post('work', 3)
    await clock.run()
    await stopped
    const c = loop.metrics().counters
    expect(ended(c)).toBe(c.accepted) // before the fix: 4 vs 3: message 2 cancelled AND succeeded
  })

  it('a started listener calling stop({ drain: false }) aborts the attempt being started, and stop() resolves', async () => {
    const { loop, clock } = virtualLoop()
    loop.on(
      'work',
      (_m, ctx) =>
        new Promise<void>((r) => {
          if (ctx.signal.aborted) r()
          ctx.signal.addEventListener('abort', () => r())
        }),
    )
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('started', () => {
      stopped ??= loop.stop({ drain: false })
    }) // same with { deadlineMs: 0 }
    loop.post('work', 1)
    await clock.run()
    let done = false
    void stopped?.then(() => (done = true))
    await clock.advance(60_000)
    expect(done).toBe(true) // before the fix: false: state draining, running 1, forever
  })

  it('a posted listener stopping (deadline 0) during restore(): every message of the snapshot ends, none is left queued', async () => {
    const first = virtualLoop({ autoStart: false })
    first.loop.on('work', () => {})
    first.loop.post('work', 1)
    first.loop.postDelayed('work', 2, 30)
    const snapshot = await first.loop.stop({ deadlineMs: 0 })
    const { loop, clock } = virtualLoop()
    loop.on('work', () => {})
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('posted', () => {
      stopped ??= loop.stop({ deadlineMs: 0 })
    })
    loop.restore(snapshot)
    await clock.run()
    const snap = (await stopped) as LoopSnapshot
    const c = loop.metrics().counters
    expect({ queued: loop.queued, ended: ended(c), inSnapshot: snap.messages.length }).toEqual({
      queued: 0,
      ended: 2,
      inSnapshot: 2,
    })
    // before the fix: { queued: 1, ended: 1, inSnapshot: 1 }: message 2 sits in a stopped loop's queue
  })

  it('drop-oldest-lowest: the victim’s dropped listener stopping (deadline 0): the newcomer is handed back, not lost', async () => {
    const { loop, clock } = virtualLoop({
      capacity: 1,
      overflow: 'drop-oldest-lowest',
      retry: { maxAttempts: 2, baseMs: 1 },
    })
    loop.on('work', async () => {
      await clock.sleep(10)
      throw new RetryableError('503')
    })
    const out: string[] = []
    const record = (e: string) => (m: { payload: unknown }) => {
      out.push(`${m.payload}:${e}`)
    }
    loop.events.on('succeeded', record('succeeded'))
    loop.events.on('dead-lettered', record('dead-lettered'))
    loop.events.on('cancelled', record('cancelled'))
    loop.events.on('dropped', record('dropped'))
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('dropped', () => {
      stopped ??= loop.stop({ deadlineMs: 0 })
    })
    loop.post('work', 1)
    loop.post('work', 2) // evicts 1
    const snap = (await stopped) as LoopSnapshot
    const runningAtStop = loop.running
    await clock.run()
    expect({ runningAtStop, outcomes: out.length + snap.messages.length }).toEqual({ runningAtStop: 0, outcomes: 2 })
    // before the fix: { runningAtStop: 1, outcomes: 1 }: 2 counted snapshotted, in no snapshot
  })

  it('stop({ deadlineMs }) from a drained listener leaves no timer armed after the stop', async () => {
    const { loop, clock } = virtualLoop()
    loop.on('work', () => {})
    loop.events.on('drained', () => {
      void loop.stop({ deadlineMs: 1000 })
    })
    loop.post('work', 1)
    await loop.stop()
    await clock.advance(0) // the pool's turn-boundary immediate
    expect(loop.state).toBe('stopped')
    expect(clock.pending).toBe(0) // before the fix: 1 (the hand-back timer; without the listener: 0)
  })
})
