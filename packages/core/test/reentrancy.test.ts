/**
 * User code that calls back into the loop at awkward moments — a listener or a handler that stops it,
 * a throwing alert hook — and async idempotency stores that answer late. Each case was found in review
 * and reproduces a bug that is now fixed.
 */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  FencedError,
  type IdempotencyStore,
  type LedgerEntry,
  type LoopSnapshot,
  NonRetryableError,
  RetryableError,
  SnapshotError,
  VirtualClock,
} from '../src/index.js'
import { asyncLedger, catchRethrown, ended, thrown, virtualLoop } from './fixtures.js'

describe('stop() called from user code', () => {
  it('from a failed listener: the retry being decided is not lost (a graceful stop waits for it)', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 10 }, random: () => 0.5 })
    let runs = 0
    loop.on('work', () => {
      runs++
      if (runs === 1) throw new RetryableError('503')
    })
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('failed', () => {
      stopped ??= loop.stop()
    })
    loop.post('work', 1)
    await clock.run()
    await stopped
    expect(runs).toBe(2)
    const c = loop.metrics().counters
    expect(ended(c)).toBe(c.accepted)
    expect(c.succeeded).toBe(1)
  })

  it('from a failed listener without drain: no stale retrying event for the cancelled retry', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 10 }, random: () => 0.5 })
    loop.on('work', () => {
      throw new RetryableError('503')
    })
    const events: string[] = []
    loop.events.on('failed', () => {
      events.push('failed')
      void loop.stop({ drain: false })
    })
    loop.events.on('retrying', () => events.push('retrying'))
    loop.events.on('cancelled', () => events.push('cancelled'))
    loop.post('work', 1)
    await clock.run()
    expect(events).toEqual(['failed', 'cancelled'])
  })

  it('from a failed listener with a deadline: the retry is handed back in the snapshot', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 10 }, random: () => 0.5 })
    loop.on('work', () => {
      throw new RetryableError('503')
    })
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('failed', () => {
      stopped ??= loop.stop({ deadlineMs: 5 })
    })
    loop.post('work', 1)
    await clock.run()
    const snapshot = (await stopped) as LoopSnapshot
    expect(snapshot.messages.map((m) => [m.state, m.attempts.length])).toEqual([['retry-scheduled', 1]])
    const c = loop.metrics().counters
    expect(ended(c)).toBe(c.accepted)
  })

  it('from a held listener: the held message is not stranded', async () => {
    const { loop, clock } = virtualLoop({ workers: 1, circuitBreaker: { consecutiveFailures: 1, cooldownMs: 100 } })
    loop.on('work', (m) => {
      if (m.payload === 0) throw new RetryableError('503')
    })
    loop.post('work', 0)
    await clock.advance(0)
    let stopped: Promise<LoopSnapshot> | undefined
    loop.events.on('held', () => {
      stopped ??= loop.stop()
    })
    loop.post('work', 1)
    await clock.run()
    await stopped
    const c = loop.metrics().counters
    expect(c).toMatchObject({ accepted: 2, succeeded: 1, deadLettered: 1 })
    expect(loop.queued).toBe(0)
  })

  it('from a synchronous handler with deadline 0: its message ends once, handed back', async () => {
    const { loop, clock } = virtualLoop()
    let stopped: Promise<LoopSnapshot> | undefined
    loop.on('work', () => {
      stopped ??= loop.stop({ deadlineMs: 0 })
    })
    loop.post('work', 1)
    await clock.run()
    const snapshot = (await stopped) as LoopSnapshot
    expect(snapshot.messages.map((m) => m.state)).toEqual(['running'])
    expect(loop.metrics().counters).toMatchObject({ accepted: 1, succeeded: 0, snapshotted: 1 })
    expect(loop.running).toBe(0)
  })

  it('on a stopped loop: arms nothing', async () => {
    const { loop, clock } = virtualLoop()
    await loop.stop()
    const controller = new AbortController()
    await loop.stop({ deadlineMs: 60_000, signal: controller.signal })
    expect(clock.pending).toBe(0)
  })

  it("a stop clears the breakers' cooldown timers", async () => {
    const { loop, clock } = virtualLoop({ circuitBreaker: { consecutiveFailures: 1, cooldownMs: 30_000 } })
    loop.on('work', () => {
      throw new RetryableError('x')
    })
    loop.post('work', 1)
    await clock.advance(0)
    await loop.stop()
    expect(clock.pending).toBe(0)
  })
})

describe('hooks that throw, late effects', () => {
  it('a throwing onAlert is re-thrown asynchronously and never stalls the loop', async () => {
    const rethrown = catchRethrown()
    try {
      const { loop, clock } = virtualLoop({
        alerts: {
          onAlert: () => {
            throw new Error('pager down')
          },
        },
      })
      loop.on('work', () => {
        throw new NonRetryableError('boom')
      })
      const events: string[] = []
      loop.events.on('dead-lettered', () => events.push('dead-lettered'))
      loop.events.on('alert', () => events.push('alert'))
      loop.post('work', 1)
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(events).toEqual(['alert', 'dead-lettered'])
      expect(rethrown.errors).toEqual([new Error('pager down')])
    } finally {
      rethrown.restore()
    }
  })

  it('commit() after the message ended is fenced', async () => {
    const { loop, clock } = virtualLoop()
    let kept: { commit(checkpoint?: unknown): void } | undefined
    loop.on('work', (_m, ctx) => {
      kept = ctx
    })
    const m = loop.post('work', 1)
    await clock.run()
    expect(thrown(() => kept?.commit('late'))).toBeInstanceOf(FencedError)
    expect(loop.trace(m.id)).toBeUndefined()
  })
})

describe('async idempotency stores that answer late', () => {
  it('a duplicate found after a timeout is not run by the retry', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>([['pay-1', { state: 'done' }]])
    const loop = createLoop<{ work: number }>({
      clock,
      logger: false,
      timeoutMs: 50,
      retry: { maxAttempts: 3, baseMs: 200 },
      random: () => 0.5,
      idempotency: { store: asyncLedger(clock, entries, 100) },
    })
    const charges: number[] = []
    loop.on('work', (m) => {
      charges.push(m.payload)
    })
    loop.post('work', 1, { idempotencyKey: 'pay-1' })
    await clock.run()
    expect(charges).toEqual([])
    expect(loop.metrics().counters).toMatchObject({ dropped: 1, succeeded: 0 })
  })

  it('a claim won after its message ended is released, not kept', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>()
    const loop = createLoop<{ work: number }>({
      clock,
      logger: false,
      timeoutMs: 50,
      idempotency: { store: asyncLedger(clock, entries, 100) },
    })
    loop.on('work', () => {})
    loop.post('work', 1, { idempotencyKey: 'k' })
    await clock.run() // times out at 50 (dead-lettered), its claim is won at 100: nobody's
    expect(entries.has('k')).toBe(false)
    expect(loop.tryPost('work', 2, { idempotencyKey: 'k' }).ok).toBe(true)
    await clock.run()
  })

  it('a post refused as full frees the key its claim wins later', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>()
    const loop = createLoop<{ work: number }>({
      clock,
      logger: false,
      capacity: 1,
      autoStart: false,
      idempotency: { store: asyncLedger(clock, entries, 10) },
    })
    const runs: number[] = []
    loop.on('work', (m) => {
      runs.push(m.payload)
    })
    loop.post('work', 0)
    expect(loop.tryPost('work', 1, { idempotencyKey: 'pay-1' }).status).toBe('full')
    loop.start()
    await clock.run()
    expect(loop.tryPost('work', 1, { idempotencyKey: 'pay-1' }).status).toBe('queued') // the producer retries
    await clock.run()
    expect(runs).toEqual([0, 1])
  })

  it('a message handed back while its claim is pending does not run', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<{ work: number }>({
      clock,
      logger: false,
      idempotency: { store: asyncLedger(clock, new Map(), 100) },
    })
    const runs: number[] = []
    loop.on('work', (m) => {
      runs.push(m.payload)
    })
    loop.post('work', 1, { idempotencyKey: 'k' })
    await clock.advance(0)
    const stopping = loop.stop({ deadlineMs: 10 })
    await clock.run()
    expect((await stopping).messages.map((m) => m.state)).toEqual(['running'])
    expect(runs).toEqual([])
  })

  it('a breaker probe dropped as a duplicate frees its probe slot', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>([['dup', { state: 'done' }]])
    const loop = createLoop<{ work: number }>({
      clock,
      logger: false,
      workers: 1,
      circuitBreaker: { consecutiveFailures: 1, cooldownMs: 100 },
      idempotency: { store: asyncLedger(clock, entries, 1) },
    })
    loop.on('work', (m) => {
      if (m.payload === 0) throw new RetryableError('503')
    })
    loop.post('work', 0)
    await clock.advance(5) // the breaker opens
    loop.post('work', 1, { idempotencyKey: 'dup' }) // held; the probe at 100, dropped as a duplicate
    loop.post('work', 2)
    loop.post('work', 3)
    await clock.run()
    expect(loop.circuits()).toEqual([])
    expect(loop.metrics().counters).toMatchObject({ dropped: 1, succeeded: 2 })
  })

  it('restore fails whole, changing nothing, when the ledger throws midway', async () => {
    const first = virtualLoop({ autoStart: false })
    first.loop.on('work', () => {})
    first.loop.post('work', 1, { idempotencyKey: 'k1' })
    first.loop.post('work', 2, { idempotencyKey: 'k2' })
    const snapshot = await first.loop.stop({ deadlineMs: 0 })
    let calls = 0
    const released: string[] = []
    const store: IdempotencyStore = {
      claim: () => {
        if (++calls === 2) throw new Error('ledger down')
        return undefined
      },
      set: () => {},
      release: (key) => {
        released.push(key)
      },
    }
    const { loop } = virtualLoop({ idempotency: { store }, autoStart: false })
    loop.on('work', () => {})
    const error = thrown(() => loop.restore(snapshot))
    expect(error).toBeInstanceOf(SnapshotError)
    expect(error.message).toContain('`messages[1].idempotencyKey` the idempotency store failed: ledger down')
    expect(loop.queued).toBe(0)
    expect(released).toEqual(['k1']) // the key taken before the failure was given back
  })
})
