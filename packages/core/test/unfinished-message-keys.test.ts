/**
 * The idempotency keys of messages that end without finishing — handed back by a stop, cancelled
 * before an async store's claim answers, caught in a restore that fails midway: a key is kept while
 * another loop may still run its message, and released once none will.
 */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type IdempotencyStore,
  type LedgerEntry,
  MemoryIdempotencyStore,
  SnapshotError,
  VirtualClock,
} from '../src/index.js'
import { asyncLedger, thrown } from './fixtures.js'

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

describe('the idempotency keys of messages that end unfinished', () => {
  it('async ledger: a message handed back before its first attempt keeps its key processing for the loop that restores it', async () => {
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

  it('a restore that fails midway leaves the keys it took over processing: a re-send is still refused', async () => {
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

  it('async ledger: a restored message cancelled before its claim answers releases its key', async () => {
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

  it('async ledger: a key re-posted while its cancelled first post’s claim is pending runs', async () => {
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
})
