/**
 * A rate limit holds at the handlers' entries: no window of `perMs`, measured at each handler's first
 * statement, holds more than `max` calls — whatever runs between a message's take and its handler's
 * call (a `started` listener that takes time, async middleware, an async ledger claim), for every
 * kind of budget: loop, type, route, key and group.
 */
import { describe, expect, it } from 'vitest'
import { createLoop, type LoopOptions, type RateLimit, type RegisterOptions } from '../src/index.js'
import { asyncLedger, BusyClock, type Messages, overWindow } from './fixtures.js'

const MAX = 2
const PER_MS = 100
const LIMIT = { max: MAX, perMs: PER_MS }
// What the `started` listener spends before each handler is called (ms), message by message.
const BURNS = [60, 0, 0, 45, 0, 10, 0, 0, 99, 0, 0, 30]

type Kind = 'loop' | 'type' | 'route' | 'key' | 'group'
const KINDS: readonly Kind[] = ['loop', 'type', 'route', 'key', 'group']

// A loop on a busy clock whose budget of `kind` is LIMIT; `handler` records its entries.
function limitedLoop(kind: Kind, extra: LoopOptions = {}) {
  const clock = new BusyClock()
  const options: LoopOptions = {
    clock,
    logger: false,
    workers: 4,
    ...(kind === 'loop' ? { rateLimit: LIMIT } : {}),
    ...(kind === 'group' ? { groups: { concurrency: 4, rateLimit: LIMIT } } : {}),
    ...extra,
  }
  const loop = createLoop<Messages>(options)
  const entries: number[] = []
  const handler = () => void entries.push(clock.now()) // its first statement
  const rateLimit: RateLimit | undefined =
    kind === 'type' ? LIMIT : kind === 'route' || kind === 'key' ? { ...LIMIT, per: kind } : undefined
  const register: RegisterOptions = rateLimit === undefined ? {} : { rateLimit }
  if (kind === 'route') loop.route('work', () => 'r', register).on('r', handler)
  else loop.on('work', handler, register)
  const post = (n: number) =>
    loop.post('work', n, kind === 'key' ? { key: 'k' } : kind === 'group' ? { group: 'g' } : {})
  return { clock, loop, entries, post }
}

describe('Loop', () => {
  describe('rate limits at handler entry', () => {
    for (const kind of KINDS) {
      it(`holds a ${kind} budget at the handlers' entries while a started listener takes time`, async () => {
        const { clock, loop, entries, post } = limitedLoop(kind)
        loop.events.on('started', (m) => clock.burn(BURNS[m.payload as number] ?? 0))
        for (let n = 0; n < BURNS.length; n++) post(n)
        await clock.run()
        expect(entries.length).toBe(BURNS.length)
        expect(overWindow(entries, MAX, PER_MS)).toBeUndefined()
      })
    }

    it('holds when middleware awaits before it calls the handler: a start counts from the entry', async () => {
      const { clock, loop, entries, post } = limitedLoop('type')
      loop.use(async (m, _ctx, next) => {
        if ((m.payload as number) % 3 === 0) await clock.sleep(70)
        await next()
      })
      for (let n = 0; n < 9; n++) post(n)
      await clock.run()
      expect(entries.length).toBe(9)
      expect(overWindow(entries, MAX, PER_MS)).toBeUndefined()
    })

    it('holds when an async ledger claim delays the handler: a start booked and not entered still counts', async () => {
      const clock = new BusyClock()
      const loop = createLoop<Messages>({
        clock,
        logger: false,
        workers: 4,
        idempotency: { store: asyncLedger(clock.virtual, new Map(), 30) },
      })
      const entries: number[] = []
      loop.on('work', () => void entries.push(clock.now()), { rateLimit: { max: 1, perMs: PER_MS } })
      for (let n = 0; n < 5; n++) loop.post('work', n, { idempotencyKey: `i${n}` })
      await clock.run()
      expect(entries.length).toBe(5)
      expect(overWindow(entries, 1, PER_MS)).toBeUndefined()
      // Booked at the take, counted from the entry 30 ms later: one start per window of entries.
      expect(entries).toEqual([30, 130, 230, 330, 430])
    })

    it('counts a start whose handler never runs from its attempt’s end, and the budget moves on', async () => {
      const { clock, loop, entries, post } = limitedLoop('type', { retry: { maxAttempts: 1 } })
      loop.use(async (m, _ctx, next) => {
        if (m.payload === 0) throw new Error('refused before the handler') // never calls next()
        await next()
      })
      for (let n = 0; n < 4; n++) post(n)
      await clock.run()
      expect(entries.length).toBe(3)
      expect(loop.metrics().counters).toMatchObject({ succeeded: 3, deadLettered: 1 })
      expect(overWindow(entries, MAX, PER_MS)).toBeUndefined()
    })
  })
})
