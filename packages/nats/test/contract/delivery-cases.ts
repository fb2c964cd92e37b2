/**
 * The contract's delivery cases in one process at a time: publish/subscribe in order, resend on
 * error, redelivery of what a process never acknowledged.
 */
import { RetryableError } from '@flowing/core'
import fc from 'fast-check'
import { expect } from 'vitest'
import {
  byKey,
  expectAtLeastOnceInKeyOrder,
  expectExactlyOnceInKeyOrder,
  expectRerunsOnlyOfFinished,
  forever,
  Log,
  signal,
  sleep,
  until,
} from './helpers.js'
import type { ContractMessages } from './transport.js'
import type { Kit } from './transport-contract.js'

type Step = ContractMessages['step']

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f']
/** Random steps: a key among a few, numbered in post order. */
const steps = (maxLength: number) =>
  fc
    .array(fc.constantFrom(...KEYS), { minLength: 1, maxLength })
    .map((keys) => keys.map((key, n): Step => ({ key, n })))

/** Registers the delivery cases. */
export function deliveryCases(kit: Kit): void {
  orderCases(kit)
  resendCases(kit)
  redeliveryCases(kit)
}

function orderCases(kit: Kit): void {
  kit.case('publish/subscribe: one key, in post order, each message once', async () => {
    const t = await kit.make()
    const log = new Log()
    t.on('step', log.handler('t'))
    await t.start()
    const posted = Array.from({ length: 50 }, (_, n): Step => ({ key: 'k', n }))
    for (const step of posted) await t.post('step', step, { key: step.key })
    await t.drain()
    expectExactlyOnceInKeyOrder(log, posted)
  })
  kit.case('publish/subscribe: random keys — per-key post order, each message once (property)', async () => {
    await fc.assert(
      fc.asyncProperty(steps(40), fc.integer({ min: 0, max: 3 }), async (posted, delayMs) => {
        const t = await kit.make()
        const log = new Log()
        t.on('step', log.handler('t', delayMs))
        await t.start()
        for (const step of posted) await t.post('step', step, { key: step.key })
        await t.drain()
        expectExactlyOnceInKeyOrder(log, posted)
        await t.dispose()
      }),
      { numRuns: kit.runs },
    )
  })
  kit.case(
    'publish/subscribe: concurrent producers — each producer’s order per key, each message once (property)',
    async () => {
      const producers = fc.array(steps(15), { minLength: 2, maxLength: 4 })
      await fc.assert(
        fc.asyncProperty(producers, async (lists) => {
          const t = await kit.make()
          const log = new Log()
          t.on('step', log.handler('t', 1))
          await t.start()
          const posted = lists.map((list, p) => list.map((s): Step => ({ ...s, p })))
          await Promise.all(
            posted.map(async (list) => {
              for (const step of list) await t.post('step', step, { key: step.key })
            }),
          )
          await t.drain()
          for (const [p, list] of posted.entries()) {
            expect(byKey(log.succeeded.filter((s) => s.p === p))).toEqual(byKey(list))
          }
          expect(log.succeeded).toHaveLength(posted.flat().length)
          await t.dispose()
        }),
        { numRuns: kit.runs },
      )
    },
  )
}

function resendCases(kit: Kit): void {
  kit.case(
    'identity: a handler can tell the id its post returned (a root’s trace id), the same on its retry',
    async () => {
      const t = await kit.make()
      const seen: [number, string, number][] = []
      t.on('step', (m) => {
        seen.push([m.payload.n, m.id, m.attempt])
        if (m.payload.n === 0 && m.attempt === 1) throw new RetryableError('once')
      })
      await t.start()
      const ids: string[] = []
      for (const n of [0, 1]) {
        const posted = await t.post('step', { key: 'k', n }, { key: 'k' })
        ids.push(posted.outcome === 'accepted' ? posted.id : 'refused')
      }
      await t.drain()
      expect(seen).toEqual([
        [0, ids[0], 1],
        [0, ids[0], 2],
        [1, ids[1], 1],
      ])
    },
  )
  kit.case('resend on error: a RetryableError is retried, and later messages of its key wait for it', async () => {
    const t = await kit.make()
    const order: string[] = []
    let failed = false
    t.on('step', async (m) => {
      order.push(`${m.payload.key}${m.payload.n}#${m.attempt}`)
      if (m.payload.key === 'k' && m.payload.n === 0 && !failed) {
        failed = true
        throw new RetryableError('downstream 503')
      }
    })
    await t.start()
    for (const n of [0, 1, 2]) await t.post('step', { key: 'k', n }, { key: 'k' })
    await t.drain()
    expect(order).toEqual(['k0#1', 'k0#2', 'k1#1', 'k2#1'])
  })
  kit.case('resend on error: whatever fails once, each key still succeeds in post order (property)', async () => {
    const flaky = steps(25).chain((posted) =>
      fc.tuple(fc.constant(posted), fc.array(fc.boolean(), { minLength: posted.length, maxLength: posted.length })),
    )
    await fc.assert(
      fc.asyncProperty(flaky, async ([posted, fails]) => {
        const t = await kit.make()
        const log = new Log()
        t.on('step', async (m) => {
          const seen = log.start('t', m)
          if (fails[m.payload.n] === true && m.attempt === 1) throw new RetryableError('flaky')
          log.done(seen)
        })
        await t.start()
        for (const step of posted) await t.post('step', step, { key: step.key })
        await t.drain()
        expectExactlyOnceInKeyOrder(log, posted)
        expect(log.started).toHaveLength(posted.length + fails.filter((f) => f).length)
        await t.dispose()
      }),
      { numRuns: kit.runs },
    )
  })
}

function redeliveryCases(kit: Kit): void {
  // Process A starts k0 and never finishes it; it ends (`end`); process B must run k0 again, then k1.
  const unacked = async (end: 'stop' | 'kill') => {
    const a = await kit.make()
    const log = new Log()
    const started = signal()
    a.on('step', async (m) => {
      const seen = log.start('a', m)
      if (m.payload.key === 'k' && m.payload.n === 0) {
        started.resolve()
        await forever
      }
      log.done(seen)
    })
    await a.start()
    const posted: Step[] = [
      { key: 'k', n: 0 },
      { key: 'k', n: 1 },
      { key: 'j', n: 2 },
    ]
    for (const step of posted) await a.post('step', step, { key: step.key })
    await started.promise
    if (end === 'stop') await a.stop({ finish: false })
    else await a.kill()
    const b = kit.track(await a.restart())
    b.on('step', log.handler('b'))
    await b.start()
    await b.drain()
    if (end === 'stop') expectExactlyOnceInKeyOrder(log, posted)
    else {
      expectAtLeastOnceInKeyOrder(log, posted)
      expectRerunsOnlyOfFinished(log, ['a'])
    }
    expect(byKey(log.succeeded.filter((s) => s.by === 'b')).get('k')).toEqual([0, 1])
  }
  kit.case('no ack → redelivery: a process that stops without finishing hands its work to the next', () =>
    unacked('stop'),
  )
  kit.case('no ack → redelivery: a process that dies mid-handler — the next one runs it again, keys in order', () =>
    unacked('kill'),
  )
  kit.case(
    'no ack → redelivery: what a stopping process hands back starts in the next one at once (within 400 ms)',
    async () => {
      const a = await kit.make()
      const started = signal()
      a.on('step', async () => {
        started.resolve()
        await forever
      })
      await a.start()
      await a.post('step', { key: 'k', n: 0 }, { key: 'k' })
      await started.promise
      await a.stop({ finish: false })
      const stoppedAt = Date.now()
      const b = kit.track(await a.restart())
      const log = new Log()
      b.on('step', log.handler('b'))
      await b.start()
      await until('the handed-back message in the next process', () => log.succeeded.length === 1)
      expect((log.succeeded[0]?.at ?? 0) - stoppedAt).toBeLessThan(400)
    },
  )
  kit.case('no ack → redelivery: a process dies while others of its keys wait — none is lost', async () => {
    const a = await kit.make()
    const log = new Log()
    a.on('step', async (m) => {
      const seen = log.start('a', m)
      if (log.started.length >= 4) await forever // dies in its 4th handler
      log.done(seen)
    })
    await a.start()
    const posted = Array.from({ length: 30 }, (_, n): Step => ({ key: `k${n % 5}`, n }))
    for (const step of posted) await a.post('step', step, { key: step.key })
    await until('the 4th handler', () => log.started.length >= 4)
    await a.kill()
    await sleep(10)
    const b = kit.track(await a.restart())
    b.on('step', log.handler('b'))
    await b.start()
    await b.drain()
    expectAtLeastOnceInKeyOrder(log, posted)
    expectRerunsOnlyOfFinished(log, ['a'])
  })
}
