/**
 * A key group's lane always moves: whatever leaves the group without running — the message the group
 * released for its free slot, cancelled before a worker took it, by id, by message, by its post's
 * signal, or while it waited for a rate limit — the group's next waiting message competes again, so
 * `drain()` and a draining `stop()` end.
 */
import { describe, expect, it } from 'vitest'
import type { Message } from '../src/index.js'
import { type Messages, virtualLoop } from './fixtures.js'

// Whether `p` settled by the next real turn (after the virtual clock ran dry, nothing is left to wait for).
const settles = (p: Promise<unknown>): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))])

type How = 'id' | 'message' | 'signal'

// A group of `limit`: `limit` messages run, then the first one's end releases the next (B); a
// `finished` listener of that first message cancels B before any worker takes it.
async function cancelReleased(limit: number, how: How, workers = 4) {
  const { loop, clock } = virtualLoop({ workers, groups: { concurrency: limit } })
  const ran: string[] = []
  loop.on('work', async (m) => {
    ran.push(`${m.payload}@${clock.now()}`)
    await clock.sleep(10 + m.payload) // the first ends first
  })
  const controller = new AbortController()
  const posted: Message<Messages, 'work'>[] = []
  for (let i = 0; i < limit + 3; i++) {
    // the message the first one's end releases gets the signal
    const signal = i === limit && how === 'signal' ? { signal: controller.signal } : {}
    posted.push(loop.post('work', i, { group: 'g', ...signal }))
  }
  const first = posted[0] as Message<Messages, 'work'>
  const released = posted[limit] as Message<Messages, 'work'>
  let result: string | undefined
  loop.events.on('finished', (m) => {
    if (m.id !== first.id) return
    if (how === 'signal') controller.abort('gave up')
    else result = loop.cancel(how === 'id' ? released.id : released)
  })
  await clock.run()
  return { loop, clock, ran, result }
}

describe('Loop', () => {
  describe('key groups: a lane never waits for a slot nothing holds', () => {
    // Limit 1: #1 is released at 10 and cancelled, so #2 takes the slot at once. Limit 3: #3 is
    // released at 10 and cancelled, #4 takes its slot at 10 and #5 the one #1 frees at 11.
    const starts: Record<number, string[]> = {
      1: ['0@0', '2@10', '3@22'],
      3: ['0@0', '1@0', '2@0', '4@10', '5@11'],
    }
    for (const limit of [1, 3]) {
      for (const how of ['id', 'message', 'signal'] as const) {
        it(`runs the rest of a group of ${limit} at once when its released message is cancelled (${how})`, async () => {
          const { loop, clock, ran, result } = await cancelReleased(limit, how)
          if (how !== 'signal') expect(result).toBe('cancelled')
          expect(ran).toEqual(starts[limit])
          expect(loop.metrics().gauges).toMatchObject({ queued: 0, grouped: 0, running: 0 })
          expect(loop.metrics().counters).toMatchObject({ accepted: limit + 3, succeeded: limit + 2, cancelled: 1 })
          expect(await settles(loop.drain())).toBe(true)
          const stopping = loop.stop()
          await clock.run()
          expect(await settles(stopping)).toBe(true)
        })
      }
    }

    it('keeps the group at its limit while a released message is cancelled: never more than N at once', async () => {
      const { loop, clock } = virtualLoop({ workers: 8, groups: { concurrency: 2 } })
      let running = 0
      let peak = 0
      loop.on('work', async () => {
        peak = Math.max(peak, ++running)
        await clock.sleep(10)
        running--
      })
      const posted = Array.from({ length: 8 }, (_, i) => loop.post('work', i, { group: 'g' }))
      // Each end releases the next; every other released message is cancelled before it starts, and an
      // unrelated fresh message of the group too (the group then hands out one too many: it waits again).
      loop.events.on('finished', (m) => {
        const n = m.payload as number
        if (n % 2 === 0 && n < 6) loop.cancel((posted[n + 2] as Message<Messages, 'work'>).id)
        if (n === 1) loop.post('work', 100, { group: 'g', signal: AbortSignal.abort() })
      })
      await clock.run()
      expect(peak).toBe(2)
      const c = loop.metrics().counters
      expect(c.succeeded + c.cancelled).toBe(c.accepted)
      expect(loop.metrics().gauges).toMatchObject({ queued: 0, grouped: 0, running: 0 })
      expect(await settles(loop.drain())).toBe(true)
    })

    it('runs the rest of a group when its released message is cancelled while it waits for a rate limit', async () => {
      const { loop, clock } = virtualLoop({ workers: 4, groups: { concurrency: 1 } })
      const ran: string[] = []
      loop.on(
        'work',
        async (m) => {
          ran.push(`w${m.payload}@${clock.now()}`)
          await clock.sleep(10)
        },
        { rateLimit: { max: 1, perMs: 1000 } },
      )
      loop.on('order.paid', (m) => void ran.push(`${m.payload.orderId}@${clock.now()}`))
      loop.post('work', 1, { group: 'g' })
      const limited = loop.post('work', 2, { group: 'g' }) // released at 10, then waits for its budget
      loop.post('order.paid', { orderId: 'p', amount: 1 }, { group: 'g' })
      loop.events.on('rate-limited', (m) => {
        if (m.id === limited.id) clock.setTimeout(() => loop.cancel(limited.id), 5)
      })
      await clock.run()
      expect(ran).toEqual(['w1@0', 'p@15'])
      expect(await settles(loop.drain())).toBe(true)
    })
  })

  describe('keys: a key’s lane never waits for a message that left', () => {
    it('runs the rest of a key when the message its release sent on is cancelled before it starts', async () => {
      const { loop, clock } = virtualLoop({ workers: 2 })
      const ran: string[] = []
      loop.on('work', async (m) => {
        ran.push(`${m.payload}@${clock.now()}`)
        await clock.sleep(10)
      })
      const [a, b] = [1, 2, 3].map((i) => loop.post('work', i, { key: 'k' })) as Message<Messages, 'work'>[]
      loop.events.on('finished', (m) => {
        if (m.id === a?.id) expect(loop.cancel((b as Message<Messages, 'work'>).id)).toBe('cancelled')
      })
      await clock.run()
      expect(ran).toEqual(['1@0', '3@10'])
      expect(loop.metrics().gauges).toMatchObject({ queued: 0, parked: 0, busyKeys: 0 })
      expect(await settles(loop.drain())).toBe(true)
    })
  })

  describe('stop(): what a stop hands over is ended once', () => {
    for (const how of [{ drain: false }, { deadlineMs: 0 }]) {
      it(`ignores a listener’s cancel of a message the stop already took (${JSON.stringify(how)})`, async () => {
        const { loop, clock } = virtualLoop({ workers: 1 })
        loop.on('work', () => clock.sleep(10))
        loop.post('work', 0) // runs: the others wait in the queue
        await clock.advance(0)
        const posted = [1, 2, 3].map((i) => loop.post('work', i))
        const answers: string[] = []
        const cancelNext = (m: Message<Messages>) => {
          const next = posted[posted.findIndex((p) => p.id === m.id) + 1]
          if (next !== undefined) answers.push(loop.cancel(next)) // by message: no lookup that could miss it
        }
        loop.events.on('finished', (m, s) => {
          if (s.outcome !== 'succeeded') cancelNext(m)
        })
        const stopping = loop.stop(how)
        await clock.run()
        const snapshot = await stopping
        expect(answers.length).toBeGreaterThan(1)
        expect(answers.every((a) => a === 'unknown')).toBe(true)
        const c = loop.metrics().counters
        expect(c.succeeded + c.cancelled + c.snapshotted).toBe(4)
        expect(snapshot.messages.length).toBe(c.snapshotted)
      })
    }
  })
})
