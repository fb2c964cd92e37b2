/**
 * The contract's durability cases: a new process receives what was posted before it started, delays
 * are never early (by the wall clock, also across a restart), dead letters and their replay, and
 * deduplication by idempotency key.
 */
import { NonRetryableError, RetryableError } from '@flowing/core'
import fc from 'fast-check'
import { expect } from 'vitest'
import { expectExactlyOnceInKeyOrder, Log } from './helpers.js'
import type { ContractMessages } from './transport.js'
import type { Kit } from './transport-contract.js'

type Step = ContractMessages['step']

/** Registers the durability cases. */
export function durabilityCases(kit: Kit): void {
  newProcessCases(kit)
  delayCases(kit)
  deadLetterCases(kit)
  dedupCases(kit)
}

function newProcessCases(kit: Kit): void {
  kit.case('a new process receives the messages posted before it started, keys in order', async () => {
    const a = await kit.make()
    const posted = Array.from({ length: 12 }, (_, n): Step => ({ key: `k${n % 3}`, n }))
    for (const step of posted) await a.post('step', step, { key: step.key })
    await a.stop({ finish: false })
    const b = kit.track(await a.restart())
    const log = new Log()
    b.on('step', log.handler('b'))
    await b.start()
    await b.drain()
    expectExactlyOnceInKeyOrder(log, posted)
  })
  kit.case('a delayed message posted before a restart arrives in the new process, never early', async () => {
    const a = await kit.make()
    const at = Date.now()
    await a.postDelayed('step', { key: 'd', n: 0 }, 400, { key: 'd' })
    await a.stop({ finish: false })
    const b = kit.track(await a.restart())
    const log = new Log()
    b.on('step', log.handler('b'))
    await b.start()
    await b.drain()
    expect(log.succeeded).toHaveLength(1)
    expect((log.succeeded[0]?.at ?? 0) - at).toBeGreaterThanOrEqual(400)
  })
}

function delayCases(kit: Kit): void {
  kit.case('delays are never early by the wall clock, and every delayed message arrives (property)', async () => {
    const delays = fc.array(fc.integer({ min: 0, max: 250 }), { minLength: 1, maxLength: 5 })
    await fc.assert(
      fc.asyncProperty(delays, async (list) => {
        const t = await kit.make()
        const log = new Log()
        t.on('step', log.handler('t'))
        await t.start()
        const postedAt: number[] = []
        for (const [n, delayMs] of list.entries()) {
          postedAt.push(Date.now())
          await t.postDelayed('step', { key: `d${n}`, n }, delayMs, { key: `d${n}` })
        }
        await t.drain()
        expect(log.succeeded.map((s) => s.n).sort((x, y) => x - y)).toEqual(list.map((_, n) => n))
        for (const s of log.succeeded) expect(s.at - (postedAt[s.n] ?? 0)).toBeGreaterThanOrEqual(list[s.n] ?? 0)
        await t.dispose()
      }),
      { numRuns: Math.max(1, Math.ceil(kit.runs / 2)) },
    )
  })
  kit.case('a delayed message does not hold back the messages of its key posted after it', async () => {
    const t = await kit.make()
    const log = new Log()
    t.on('step', log.handler('t'))
    await t.start()
    await t.postDelayed('step', { key: 'k', n: 0 }, 300, { key: 'k' })
    await t.post('step', { key: 'k', n: 1 }, { key: 'k' })
    await t.drain()
    expect(log.succeeded.map((s) => s.n)).toEqual([1, 0])
  })
}

function deadLetterCases(kit: Kit): void {
  kit.case(
    'dead letters: a non-retryable failure lands there without blocking its key; replay runs it again',
    async () => {
      const t = await kit.make()
      const log = new Log()
      let broken = true
      t.on('step', async (m) => {
        const seen = log.start('t', m)
        if (m.payload.n === 0 && broken) throw new NonRetryableError('card declined')
        log.done(seen)
      })
      await t.start()
      await t.post('step', { key: 'k', n: 0 }, { key: 'k' })
      await t.post('step', { key: 'k', n: 1 }, { key: 'k' })
      await t.drain()
      expect(await t.deadLetterCount()).toBe(1)
      expect(log.started.map((s) => s.n)).toEqual([0, 1]) // not retried
      expect(log.succeeded.map((s) => s.n)).toEqual([1])
      broken = false
      expect(await t.replayDeadLetters()).toBe(1)
      await t.drain()
      expect(log.succeeded.map((s) => s.n)).toEqual([1, 0])
      expect(await t.deadLetterCount()).toBe(0)
    },
  )
  kit.case('dead letters: exhausted retries land there, survive a restart, and replay in the new process', async () => {
    const a = await kit.make()
    let attempts = 0
    a.on('step', () => {
      attempts++
      throw new RetryableError('still down')
    })
    await a.start()
    await a.post('step', { key: 'k', n: 0 }, { key: 'k' })
    await a.drain()
    expect(attempts).toBe(3)
    expect(await a.deadLetterCount()).toBe(1)
    await a.stop()
    const b = kit.track(await a.restart())
    const log = new Log()
    b.on('step', log.handler('b'))
    await b.start()
    expect(await b.deadLetterCount()).toBe(1)
    expect(await b.replayDeadLetters()).toBe(1)
    await b.drain()
    expect(log.succeeded.map((s) => s.n)).toEqual([0])
    expect(await b.deadLetterCount()).toBe(0)
  })
}

function dedupCases(kit: Kit): void {
  kit.case('dedup: one idempotency key posted twice — in a row, at once, after it ran — is handled once', async () => {
    const t = await kit.make()
    const log = new Log()
    t.on('step', log.handler('t'))
    await t.start()
    expect((await t.post('step', { key: 'k', n: 0 }, { key: 'k', idempotencyKey: 'once' })).outcome).toBe('accepted')
    expect((await t.post('step', { key: 'k', n: 1 }, { key: 'k', idempotencyKey: 'once' })).outcome).toBe('duplicate')
    const both = await Promise.all([
      t.post('step', { key: 'k', n: 2 }, { key: 'k', idempotencyKey: 'twice' }),
      t.post('step', { key: 'k', n: 3 }, { key: 'k', idempotencyKey: 'twice' }),
    ])
    expect(both.map((b) => b.outcome).sort()).toEqual(['accepted', 'duplicate'])
    await t.drain()
    expect((await t.post('step', { key: 'k', n: 4 }, { key: 'k', idempotencyKey: 'once' })).outcome).toBe('duplicate')
    await t.drain()
    const ran = log.succeeded.map((s) => s.n)
    expect(ran).toHaveLength(2)
    expect(ran[0]).toBe(0)
    expect([2, 3]).toContain(ran[1])
  })
  kit.case('dedup: a key handled before a restart is still a duplicate in the new process', async () => {
    const a = await kit.make()
    const log = new Log()
    a.on('step', log.handler('a'))
    await a.start()
    await a.post('step', { key: 'k', n: 0 }, { idempotencyKey: 'pay-1' })
    await a.drain()
    await a.stop()
    const b = kit.track(await a.restart())
    b.on('step', log.handler('b'))
    await b.start()
    expect((await b.post('step', { key: 'k', n: 1 }, { idempotencyKey: 'pay-1' })).outcome).toBe('duplicate')
    await b.drain()
    expect(log.succeeded.map((s) => [s.by, s.n])).toEqual([['a', 0]])
  })
}
