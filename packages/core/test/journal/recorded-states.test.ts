/**
 * What the journal records of a message: a dead letter as it was posted (whatever the handler did to
 * its payload), a delayed message across a plain `stop()`, a retry back from its back-off as queued.
 */
import { describe, expect, it } from 'vitest'
import { createLoop, MemoryStore, NonRetryableError, RetryableError, VirtualClock } from '../../src/index.js'
import { type Jobs, loopOn, payloads, settle } from './journal-fixtures.js'

describe('what a journaled loop records', () => {
  it('keeps a dead letter as posted when the handler changed its payload into something JSON cannot take', async () => {
    const store = new MemoryStore()
    const { loop, clock } = loopOn(store)
    loop.on('job', (m) => {
      m.payload.total = 10n
      throw new NonRetryableError('declined')
    })
    loop.start()
    loop.post('job', { n: 'x' })
    await settle(clock)
    await settle(clock)
    await loop.flushed()
    expect(loop.metrics().journal?.failing).toBe(false)
    expect(store.recovered().deadLetters.map((l) => l.payload)).toEqual([{ n: 'x' }])
    expect(loop.tryPost('job', { n: 'y' }).ok).toBe(true)
  })

  it('keeps delayed messages in the journal across a plain stop(), and the next start runs them', async () => {
    const store = new MemoryStore()
    const { loop, clock } = loopOn(store)
    loop.on('job', () => {})
    loop.start()
    loop.postDelayed('job', { n: 'later' }, 3_600_000)
    await settle(clock)
    const snapshot = await loop.stop()
    expect(snapshot.messages.map((m) => m.state)).toEqual(['delayed'])
    expect(payloads(store)).toEqual(['later/delayed'])
  })

  it('records a retry that came back from its back-off as queued again', async () => {
    const store = new MemoryStore()
    const clock = new VirtualClock()
    const loop = createLoop<Jobs>({ clock, logger: false, store, retry: { maxAttempts: 3, baseMs: 100, jitter: 0 } })
    loop.on('job', async (_m, ctx) => {
      if (ctx.attempt === 1) throw new RetryableError('again')
      await clock.sleep(60_000)
    })
    loop.start()
    loop.post('job', { n: 'r' })
    await settle(clock)
    expect(payloads(store)).toEqual(['r/retry-scheduled'])
    await settle(clock, 150)
    expect(payloads(store)).toEqual(['r/queued'])
  })
})
