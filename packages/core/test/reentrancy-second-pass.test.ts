import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type IdempotencyStore,
  type LedgerEntry,
  type LoopSnapshot,
  MemoryIdempotencyStore,
  RetryableError,
  SnapshotError,
  VirtualClock,
} from '../src/index.js'
import { asyncLedger, ended, thrown, virtualLoop } from './fixtures.js'

/** A loop on `clock` whose handler does nothing, with `store` as its ledger (paused unless `autoStart`). */
function ledgerLoop(clock: VirtualClock, store?: IdempotencyStore, autoStart = false) {
  const loop = createLoop<{ work: number }>({
    clock,
    logger: false,
    autoStart,
    ...(store === undefined ? {} : { idempotency: { store } }),
  })
  loop.on('work', () => {})
  return loop
}

/**
 * Second review pass: more user code calling back into the loop (listeners of every event stopping it,
 * cancelling, restoring) and async ledgers answering late. Each case failed before its fix.
 */
describe('re-entrancy and late answers, second pass', () => {
  it('1 wheel batch: handle.cancel() from a listener in the same tick returns true, yet the message runs', async () => {
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

  it('1b wheel batch: retries due together, a requeued listener stops with deadline 0', async () => {
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

  it('2 circuit listener stops the loop while half-opening: cancelled held message still runs', async () => {
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

  it('3 a started listener stop({ drain: false }) does not abort the attempt being started: stop() never resolves', async () => {
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

  it('4 (regression of 36183c9) async ledger: a message handed back before its first attempt has its key released', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>()
    const loop = ledgerLoop(clock, asyncLedger(clock, entries, 5, true))
    loop.post('work', 1, { idempotencyKey: 'k1' })
    await clock.advance(10) // the claim answered (won); the message has not run
    const snapshot = await loop.stop({ deadlineMs: 0 })
    await clock.run()
    expect(snapshot.messages).toHaveLength(1)
    expect(entries.get('k1')?.state).toBe('processing') // before the fix: undefined (sync store: 'processing')
  })

  it('5 restore that fails midway deletes the ledger entries of keys it took over (a re-send is then admitted)', async () => {
    const clock = new VirtualClock()
    const shared = new MemoryIdempotencyStore(100, clock)
    const first = ledgerLoop(clock, shared)
    first.post('work', 1, { idempotencyKey: 'k1' })
    first.post('work', 2, { idempotencyKey: 'k2' })
    const snapshot = await first.stop({ deadlineMs: 0 }) // k1, k2 stay 'processing' in the shared ledger
    const flaky: IdempotencyStore = {
      claim: (k, t, r) => {
        if (k === 'k2') throw new Error('ledger down')
        return shared.claim(k, t, r)
      },
      set: (k, e, t) => shared.set(k, e, t),
      release: (k) => shared.release(k),
    }
    const second = ledgerLoop(clock, flaky)
    expect(thrown(() => second.restore(snapshot))).toBeInstanceOf(SnapshotError)
    const other = ledgerLoop(clock, shared)
    expect(other.tryPost('work', 99, { idempotencyKey: 'k1' }).ok).toBe(false) // before the fix: true: k1 was released
  })

  it('6 async ledger: a restored message cancelled before its claim answers leaves the key processing forever', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>([['k1', { state: 'processing' }]]) // left by the loop that handed it back
    const loop = ledgerLoop(clock, asyncLedger(clock, entries, 5, true))
    const first = ledgerLoop(clock)
    first.post('work', 1, { idempotencyKey: 'k1' })
    loop.restore(await first.stop({ deadlineMs: 0 }))
    const st = loop.stop({ drain: false }) // cancelled: with the sync store the key is released
    await clock.run()
    await st
    expect(loop.metrics().counters.cancelled).toBe(1)
    expect(entries.has('k1')).toBe(false) // before the fix: k1: processing (refuses every re-send until the TTL)
  })

  it('7 async ledger: a key re-posted while its cancelled first post’s claim is pending is dropped as a duplicate of nothing', async () => {
    const clock = new VirtualClock()
    const entries = new Map<string, LedgerEntry>()
    const loop = createLoop<{ work: number }>({
      clock,
      logger: false,
      idempotency: { store: asyncLedger(clock, entries, 5, true) },
    })
    const runs: number[] = []
    loop.on('work', (m) => {
      runs.push(m.payload)
    })
    loop.postDelayed('work', 1, 100, { idempotencyKey: 'K' }).cancel()
    loop.post('work', 2, { idempotencyKey: 'K' })
    await clock.run()
    expect(runs).toEqual([2]) // before the fix: []: 2 dropped 'duplicate', then the orphan release empties the ledger
  })

  it('8 a posted listener stops (deadline 0) during restore(): a delayed message of the snapshot is admitted after and lost', async () => {
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

  it('9 drop-oldest-lowest: the victim’s dropped listener stops (deadline 0); the newcomer is still enqueued, stop resolves while it runs, it is lost', async () => {
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

  it('10 stop({ deadlineMs }) from a drained listener leaves a timer armed after the stop (it later fires a cut-off and idle on the stopped loop)', async () => {
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
