/**
 * Throughput of the group commit, measured on a server with `fsync=on` (every commit waits for its WAL
 * flush, as in production), and the time to open over a large journal. The figures are printed (the
 * README's come from bench/measure.ts, on a quiet machine). The test fails only below a floor well
 * under the package's 5k records/s target, for the best of three runs: the other test files load the
 * same CPUs meanwhile, and what it must catch is a regression by an order of magnitude (a quadratic
 * plan), not noise.
 */
import { describe, expect, it } from 'vitest'
import type { PostgresStore } from '../src/index.js'
import { batch, describePostgres, record, useDatabase } from './fixtures.js'

const FLOOR_PER_SECOND = 3_000

describePostgres('PostgresStore throughput', () => {
  const db = useDatabase({ fsync: true })

  // Steady state: each batch journals `size` new messages and removes the `size` of the batch before.
  async function steady(store: PostgresStore, size: number, batches: number): Promise<number> {
    let previous: string[] = []
    const started = performance.now()
    for (let b = 0; b < batches; b++) {
      const messages = Array.from({ length: size }, (_, i) => message(`${size}-${b}-${i}`))
      await store.commit(batch({ messages, removed: previous }))
      previous = messages.map((m) => m.id)
    }
    return (size * batches) / ((performance.now() - started) / 1000)
  }

  describe('commit()', () => {
    it(`journals at least ${FLOOR_PER_SECOND} records/s in batches of 1000, one round trip per batch`, async () => {
      const store = await db.open()
      await steady(store, 1000, 3) // warm-up: connections, prepared statements
      const big = Math.max(await steady(store, 1000, 10), await steady(store, 1000, 10), await steady(store, 1000, 10))
      const small = Math.max(await steady(store, 10, 300), await steady(store, 10, 300), await steady(store, 10, 300))
      console.log(
        `@flowing/postgres commit, fsync=on (best of 3): ${Math.round(big)} records/s in batches of 1000 (${((1000 / big) * 1000).toFixed(1)} ms/batch); ${Math.round(small)} records/s in batches of 10 (${((10 / small) * 1000).toFixed(2)} ms/batch)`,
      )
      expect(big).toBeGreaterThan(FLOOR_PER_SECOND)
      expect(store.commits).toBe(3 + 30 + 900)
    }, 120_000)
  })

  describe('postgresStore()', () => {
    it('opens over 100k rows and recovers them in order', async () => {
      const writer = await db.open({ owner: 'big' })
      for (let b = 0; b < 100; b++) {
        await writer.commit(batch({ messages: Array.from({ length: 1000 }, (_, i) => message(`r-${b * 1000 + i}`)) }))
      }
      await writer.close()
      const started = performance.now()
      const reader = await db.open({ owner: 'big' })
      const ms = performance.now() - started
      const messages = reader.recovered().messages
      console.log(`@flowing/postgres open: 100000 rows recovered in ${Math.round(ms)} ms`)
      expect(messages).toHaveLength(100_000)
      expect(messages[0]?.id).toBe('r-0')
      expect(messages[99_999]?.id).toBe('r-99999')
      const empty = performance.now()
      await db.open({ journal: 'empty' })
      console.log(`@flowing/postgres open: an empty journal in ${Math.round(performance.now() - empty)} ms`)
    }, 120_000)
  })
})

// A message the size of a typical one: a small JSON payload, a key, a trace id (about 250 B of JSON).
function message(id: string) {
  return record(id, {
    payloadJson: JSON.stringify({ orderId: id, customer: 'c-81723', amount: 129.9, currency: 'EUR', lines: 3 }),
    key: 'c-81723',
    traceId: `trace-${id}`,
  })
}
