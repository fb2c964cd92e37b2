/**
 * `loop.inspect()`: a read-only picture of a loop's key lanes (who holds each busy key, how many wait
 * behind it), its running handlers, key groups and rate limits, and a key's traces — and
 * `loop.jobs.list()`, the keyed messages that have not started. Everything on virtual time.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  type KeyLane,
  type LoopInspection,
  type MessageKey,
  RateLimitError,
  RetryableError,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

// A handler that runs until the test lets it go: `release()` settles every attempt started so far.
function blocking() {
  const waiting: (() => void)[] = []
  return {
    handler: () => new Promise<void>((resolve) => waiting.push(resolve)),
    release: () => {
      for (const resolve of waiting.splice(0)) resolve()
    },
  }
}

const lane = (i: LoopInspection, key: MessageKey): KeyLane | undefined => i.keys.find((l) => l.key === key)

describe('Loop', () => {
  describe('inspect()', () => {
    it('shows a busy key with the messages parked behind its running holder, and the running handlers', async () => {
      const { loop, clock } = virtualLoop({ workers: 4 })
      const work = blocking()
      loop.on('work', work.handler)
      await clock.advance(5)
      const a = [1, 2, 3, 4].map((i) => loop.post('work', i, { key: 'a' }))
      await clock.advance(0)
      await clock.advance(7)
      const b = loop.post('work', 9, { key: 'b' })
      const free = loop.post('work', 10)
      await clock.advance(0)
      const now = loop.inspect()
      expect(now.at).toBe(12)
      expect(now.busyKeys).toBe(2)
      expect(now.keys).toEqual([
        { key: 'a', holder: { id: a[0]?.id, type: 'work', state: 'running', since: 5, attempt: 1 }, waiting: 3 },
        { key: 'b', holder: { id: b.id, type: 'work', state: 'running', since: 12, attempt: 1 }, waiting: 0 },
      ])
      expect(now.running).toEqual([
        { id: a[0]?.id, type: 'work', key: 'a', routeKey: undefined, attempt: 1, startedAt: 5 },
        { id: b.id, type: 'work', key: 'b', routeKey: undefined, attempt: 1, startedAt: 12 },
        { id: free.id, type: 'work', key: undefined, routeKey: undefined, attempt: 1, startedAt: 12 },
      ])
      expect(now.groups).toEqual([])
      expect(now.limits).toEqual([])
      expect(now.traces).toEqual([])
      expect(loop.metrics().gauges).toMatchObject({ parked: 3, busyKeys: 2, running: 3 })
      work.release()
      await clock.advance(0)
      expect(lane(loop.inspect(), 'a')).toMatchObject({ holder: { id: a[1]?.id, state: 'running' }, waiting: 2 })
    })

    it("shows a key held by its route's open breaker as 'held', since the hold began", async () => {
      const { loop, clock } = virtualLoop({
        workers: 2,
        retry: { maxAttempts: 1 },
        circuitBreaker: { consecutiveFailures: 1, cooldownMs: 1000 },
      })
      loop.on('work', () => {
        throw new RetryableError('503')
      })
      loop.post('work', 0, { key: 'k' })
      await clock.advance(10) // dead-lettered at 0; the breaker is open
      const held = loop.post('work', 1, { key: 'k' })
      loop.post('work', 2, { key: 'k' })
      await clock.advance(0)
      const now = loop.inspect()
      expect(now.keys).toEqual([
        { key: 'k', holder: { id: held.id, type: 'work', state: 'held', since: 10, attempt: 1 }, waiting: 1 },
      ])
      expect(now.running).toEqual([])
    })

    it("shows a key kept through the back-off before an ordered retry as 'retrying', with its next attempt", async () => {
      const { loop, clock } = virtualLoop({ workers: 2, retry: { maxAttempts: 3, baseMs: 100, order: 'ordered' } })
      const failing = new Set<number>([1])
      loop.on('work', (m) => {
        if (failing.delete(m.payload)) throw new RetryableError('503')
      })
      await clock.advance(5)
      const first = loop.post('work', 1, { key: 'k' })
      loop.post('work', 2, { key: 'k' })
      loop.post('work', 3, { key: 'k' })
      await clock.advance(0)
      expect(loop.inspect().keys).toEqual([
        { key: 'k', holder: { id: first.id, type: 'work', state: 'retrying', since: 5, attempt: 2 }, waiting: 2 },
      ])
      await clock.run()
      expect(loop.inspect()).toMatchObject({ busyKeys: 0, keys: [], running: [] })
    })

    it('shows each key group with a limit that has messages running or waiting', async () => {
      const { loop, clock } = virtualLoop({
        workers: 8,
        groups: { concurrency: 1, overrides: { big: { concurrency: 2 } } },
      })
      const work = blocking()
      loop.on('work', work.handler)
      for (const i of [1, 2, 3]) loop.post('work', i, { group: 'small' })
      const kept = loop.post('work', 4, { group: 'small', key: 'x' })
      for (const i of [5, 6]) loop.post('work', i, { group: 'big' })
      await clock.advance(0)
      const now = loop.inspect()
      expect(now.groups).toEqual([
        { group: 'small', running: 1, limit: 1, waiting: 3 },
        { group: 'big', running: 2, limit: 2, waiting: 0 },
      ])
      // A keyed message waiting for room in its group keeps its key: it waits for capacity.
      expect(lane(now, 'x')?.holder).toMatchObject({ id: kept.id, state: 'rate-limited', attempt: 1 })
      expect(loop.metrics().gauges.grouped).toBe(3)
    })

    it('shows a rate-limit budget: its allowance, the starts counted in the window, what waits', async () => {
      const { loop, clock } = virtualLoop({ workers: 8 })
      const work = blocking()
      loop.on('work', work.handler, { rateLimit: { max: 2, perMs: 1000 } })
      await clock.advance(3)
      for (const i of [1, 2, 3, 4]) loop.post('work', i)
      const last = loop.post('work', 5, { key: 'k' })
      await clock.advance(0)
      expect(loop.inspect().limits).toEqual([
        { name: 'type:work', scope: 'type', max: 2, windowMs: 1000, used: 2, waiting: 3, until: undefined },
      ])
      work.release()
      await clock.advance(1000) // the first two age out: two more start
      const now = loop.inspect()
      expect(now.limits).toEqual([
        { name: 'type:work', scope: 'type', max: 2, windowMs: 1000, used: 2, waiting: 1, until: undefined },
      ])
      expect(now.running).toHaveLength(2)
      // Untraced (traces: 'failures'), a message waiting for a budget shows when it entered the queue.
      expect(now.keys).toEqual([
        { key: 'k', holder: { id: last.id, type: 'work', state: 'rate-limited', since: 3, attempt: 1 }, waiting: 0 },
      ])
    })

    it("shows a RateLimitError's retry-after pause until it ends, and the key its message keeps", async () => {
      const { loop, clock } = virtualLoop({ workers: 2 })
      let refuse = true
      loop.on('work', () => {
        if (refuse) {
          refuse = false
          throw new RateLimitError('429', { retryAfterMs: 500 })
        }
      })
      await clock.advance(20)
      const m = loop.post('work', 1, { key: 'k' })
      await clock.advance(0)
      const now = loop.inspect()
      expect(now.limits).toEqual([
        { name: 'retry-after:work', scope: 'retry-after', max: 1, windowMs: 1000, used: 0, waiting: 1, until: 520 },
      ])
      // No attempt consumed: it makes attempt 1 again once the pause ends.
      expect(now.keys).toEqual([
        { key: 'k', holder: { id: m.id, type: 'work', state: 'rate-limited', since: 20, attempt: 1 }, waiting: 0 },
      ])
      await clock.advance(500)
      expect(loop.inspect().limits).toMatchObject([{ name: 'retry-after:work', until: undefined, waiting: 0 }])
      expect(loop.metrics().counters.succeeded).toBe(1)
    })

    it('lists at most `keys` lanes, the most waiting first, ties the longest held first', async () => {
      const { loop, clock } = virtualLoop({ workers: 16 })
      const work = blocking()
      loop.on('work', work.handler)
      const postOn = (key: string, n: number) => {
        for (let i = 0; i < n; i++) loop.post('work', i, { key })
      }
      postOn('e', 3) // held from 0
      await clock.advance(0)
      await clock.advance(1)
      postOn('f', 3) // held from 1, as long waiting as e
      postOn('a', 4)
      postOn('b', 2)
      postOn('c', 6)
      postOn('d', 1)
      await clock.advance(0)
      const waiting = (i: LoopInspection) => i.keys.map((l) => `${l.key}:${l.waiting}`)
      expect(waiting(loop.inspect())).toEqual(['c:5', 'a:3', 'e:2', 'f:2', 'b:1', 'd:0'])
      expect(waiting(loop.inspect({ keys: 3 }))).toEqual(['c:5', 'a:3', 'e:2'])
      expect(waiting(loop.inspect({ keys: 4 }))).toEqual(['c:5', 'a:3', 'e:2', 'f:2'])
      expect(loop.inspect({ keys: 0 })).toMatchObject({ busyKeys: 6, keys: [] })
      expect(waiting(loop.inspect({}))).toHaveLength(6)
    })

    it("gives a key's traces, newest first, with `traceKey`", async () => {
      const { loop, clock } = virtualLoop({ traces: 'all' })
      loop.on('work', () => {})
      const a = [1, 2, 3].map((i) => loop.post('work', i, { key: 'a' }))
      loop.post('work', 4, { key: 'b' })
      loop.post('work', 5, { key: 7 })
      await clock.run()
      const traces = loop.inspect({ traceKey: 'a' }).traces
      expect(traces.map((t) => t.id)).toEqual(a.map((m) => m.id).reverse())
      expect(traces[0]).toMatchObject({ key: 'a', state: 'succeeded' })
      expect(loop.inspect({ traceKey: 7 }).traces).toHaveLength(1)
      expect(loop.inspect({ traceKey: 'none' }).traces).toEqual([])
      expect(loop.inspect().traces).toEqual([])
    })

    it('gives a message and its follow-ups with `traceId` (they share it)', async () => {
      const { loop, clock } = virtualLoop({ traces: 'all' })
      loop.on('work', (m, ctx) => {
        if (m.payload !== 0) return
        ctx.post('work', 1, { key: 'c' })
        ctx.post('work', 2)
      })
      const parent = loop.post('work', 0, { key: 'p' })
      loop.post('work', 9) // another trace
      await clock.run()
      const family = loop.inspect({ traceId: parent.traceId }).traces
      expect(family.map((t) => t.key)).toEqual([undefined, 'c', 'p'])
      expect(family.every((t) => t.traceId === parent.traceId)).toBe(true)
      expect(loop.inspect({ traceId: parent.traceId, traceKey: 'c' }).traces.map((t) => t.key)).toEqual(['c'])
      expect(loop.inspect({ traceId: 'none' }).traces).toEqual([])
    })

    it('refuses bad options with a typed error naming the option', () => {
      const { loop } = virtualLoop()
      const cases: [unknown, string][] = [
        [5, 'Expected `options` to be an object, got `5` (number)'],
        [null, 'Expected `options` to be an object, got `null` (null)'],
        [
          { key: 3 },
          'Expected `options.key` to be one of the known options (keys, traceKey, traceId), got `3` (number); did you mean `keys`?',
        ],
        [{ keys: -1 }, 'Expected `options.keys` to be an integer from 0 to 10000, got `-1` (number)'],
        [{ keys: 1.5 }, 'Expected `options.keys` to be an integer from 0 to 10000, got `1.5` (number)'],
        [{ keys: 10_001 }, 'Expected `options.keys` to be an integer from 0 to 10000, got `10001` (number)'],
        [{ keys: '3' }, 'Expected `options.keys` to be an integer from 0 to 10000, got `"3"` (string)'],
        [{ traceKey: {} }, 'Expected `options.traceKey` to be a string or a finite number, got `[object]` (object)'],
        [{ traceKey: Number.NaN }, 'Expected `options.traceKey` to be a string or a finite number, got `NaN` (number)'],
        [{ traceId: '' }, 'Expected `options.traceId` to be a non-empty string, got `""` (string)'],
      ]
      for (const [options, message] of cases) {
        const e = thrown(() => loop.inspect(options as never))
        expect(e).toBeInstanceOf(InvalidArgumentError)
        expect(e.message).toBe(message)
      }
      expect(loop.inspect({ keys: 10_000 }).keys).toEqual([])
    })

    it('sums, over every lane, to the parked messages, and with the running ones to all posted (property)', async () => {
      // With more workers than keys and keyless messages together, every post starts or parks at once:
      // a key's first message runs, the rest reach the front while it runs and park in its lane
      // (nothing stays in the ready queue). So Σ waiting = the `parked` gauge, running = keys +
      // keyless, and the two together are every message posted — and each lane is its key's count − 1.
      const post = fc.record({ key: fc.option(fc.constantFrom('a', 'b', 'c', 'd', 1, 2), { nil: undefined }) })
      await fc.assert(
        fc.asyncProperty(fc.array(post, { maxLength: 60 }), async (posts) => {
          const { loop, clock } = virtualLoop({ workers: 100 })
          const work = blocking()
          loop.on('work', work.handler)
          const first = new Map<MessageKey, string>()
          const counts = new Map<MessageKey, number>()
          for (const [i, { key }] of posts.entries()) {
            const m = loop.post('work', i, key === undefined ? {} : { key })
            if (key === undefined) continue
            if (!first.has(key)) first.set(key, m.id)
            counts.set(key, (counts.get(key) ?? 0) + 1)
          }
          await clock.advance(0)
          const now = loop.inspect({ keys: 10_000 })
          const { gauges } = loop.metrics()
          const waiting = now.keys.reduce((sum, l) => sum + l.waiting, 0)
          expect(waiting).toBe(gauges.parked)
          expect(now.busyKeys).toBe(gauges.busyKeys)
          expect(now.running).toHaveLength(gauges.running)
          expect(waiting + now.running.length).toBe(posts.length)
          expect(gauges.queued + gauges.running).toBe(posts.length)
          expect(now.keys).toHaveLength(counts.size)
          for (const l of now.keys) {
            expect(l.waiting).toBe((counts.get(l.key) ?? 0) - 1)
            expect(l.holder).toMatchObject({ id: first.get(l.key), state: 'running' })
          }
          work.release()
          await clock.run()
        }),
        { numRuns: 50 },
      )
    })
  })

  describe('jobs.list()', () => {
    it('lists the keyed messages that have not started, due now first, then by due time, at most `limit`', async () => {
      const { loop, clock } = virtualLoop({ workers: 1 })
      const work = blocking()
      loop.on('work', work.handler)
      loop.post('work', 0, { jobKey: 'running' })
      loop.postDelayed('work', 1, 500, { jobKey: 'late' })
      loop.postDelayed('work', 2, 100, { jobKey: 'soon' })
      const queued = loop.post('work', 3, { jobKey: 'queued' })
      loop.post('work', 4, { jobKey: 'queued-too' })
      await clock.advance(0)
      expect(loop.jobs.get('running')).toBeUndefined() // started: no longer listed
      const list = loop.jobs.list()
      expect(list.map((j) => `${j.jobKey}:${j.state}:${j.dueAt}`)).toEqual([
        'queued:waiting:undefined',
        'queued-too:waiting:undefined',
        'soon:delayed:100',
        'late:delayed:500',
      ])
      expect(list[0]).toEqual({ id: queued.id, type: 'work', payload: 3, state: 'waiting', jobKey: 'queued' })
      expect(loop.jobs.list({ limit: 3 }).map((j) => j.jobKey)).toEqual(['queued', 'queued-too', 'soon'])
      expect(loop.jobs.list({ limit: 0 })).toEqual([])
      expect(loop.jobs.list({}).map((j) => j.jobKey)).toHaveLength(4)
      expect(loop.jobs.cancel('running')).toBe('started')
    })

    it('lists at most 100 by default', async () => {
      const { loop, clock } = virtualLoop()
      loop.on('work', () => {})
      for (let i = 0; i < 150; i++) loop.postDelayed('work', i, 1000 - i, { jobKey: `j${i}` })
      const list = loop.jobs.list()
      expect(list).toHaveLength(100)
      expect(list[0]).toMatchObject({ jobKey: 'j149', dueAt: 851 })
      await clock.run()
      expect(loop.jobs.list()).toEqual([])
    })

    it('refuses bad options with a typed error naming the option', () => {
      const { loop } = virtualLoop()
      const cases: [unknown, string][] = [
        ['all', 'Expected `options` to be an object, got `"all"` (string)'],
        [
          { limt: 3 },
          'Expected `options.limt` to be one of the known options (limit), got `3` (number); did you mean `limit`?',
        ],
        [{ limit: -1 }, 'Expected `options.limit` to be a non-negative integer, got `-1` (number)'],
        [{ limit: 2.5 }, 'Expected `options.limit` to be a non-negative integer, got `2.5` (number)'],
      ]
      for (const [options, message] of cases) {
        const e = thrown(() => loop.jobs.list(options as never))
        expect(e).toBeInstanceOf(InvalidArgumentError)
        expect(e.message).toBe(message)
      }
    })
  })
})
