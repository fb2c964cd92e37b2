/**
 * A journaled loop whose commits fail: a failed batch keeps its rows ahead of newer ones (per-key order
 * after a crash), and the commit loop's back-off holds however busy the loop is.
 */
import { describe, expect, it } from 'vitest'
import { type JournalBatch, MemoryStore, RetryableError, type Store } from '../../src/index.js'
import { loopOn, payloads, settle } from './journal-fixtures.js'

describe('a journaled loop whose commits fail', () => {
  it('a failed async commit keeps its rows ahead of newer ones (per-key order after a crash)', async () => {
    const inner = new MemoryStore()
    const gates: ((ok: boolean) => void)[] = []
    const store: Store = {
      name: 'async',
      recovered: () => inner.recovered(),
      close: () => inner.close(),
      commit: (batch: JournalBatch) =>
        new Promise<void>((resolve, reject) => {
          gates.push((ok) => {
            if (!ok) return reject(new Error('connection reset'))
            inner.commit(batch)
            resolve()
          })
        }),
    }
    const { loop, clock } = loopOn(store)
    loop.on('job', () => {})
    loop.events.on('store-error', () => {})
    loop.start()
    loop.pause()
    loop.post('job', { n: 'A' }, { key: 'k' })
    await settle(clock) // A's batch is in flight
    loop.post('job', { n: 'B' }, { key: 'k' }) // accepted meanwhile
    gates.shift()?.(false) // A's commit fails
    await settle(clock, 100) // the retry: A and B in one batch
    gates.shift()?.(true)
    await settle(clock)
    expect(payloads(inner)).toEqual(['A/queued', 'B/queued'])
  })

  it('holds the retry back-off while commits fail, however busy the loop is', async () => {
    const inner = new MemoryStore()
    let attempts = 0
    const store: Store = {
      name: 'down',
      recovered: () => inner.recovered(),
      close: () => inner.close(),
      commit: () => {
        attempts++
        throw new Error('EIO')
      },
    }
    const { loop, clock } = loopOn(store)
    loop.events.on('store-error', () => {})
    loop.on('job', async (_m, ctx) => {
      await clock.sleep(1)
      if (ctx.attempt < 50) throw new RetryableError('again')
    })
    loop.start()
    loop.post('job', { n: 'x' }, { retry: { maxAttempts: 60, baseMs: 1, jitter: 0, factor: 1 } })
    for (let t = 0; t < 100; t++) await settle(clock, 1)
    expect(attempts).toBeLessThanOrEqual(6) // 50, 100, 200 … ms apart, not one per busy turn
  })
})
