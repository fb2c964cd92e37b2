import { describe, expect, it } from 'vitest'
import {
  type GateChange,
  InvalidArgumentError,
  MessageCancelledError,
  RequestFailedError,
  type TimeLimitReport,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

const later = (clock: { setTimeout(fn: () => void, ms: number): unknown }, ms: number) =>
  new Promise<void>((resolve) => clock.setTimeout(resolve, ms))

describe('Loop', () => {
  describe('key groups', () => {
    it('runs at most N of a group at once, FIFO within the group, others flowing past', async () => {
      const { loop, clock } = virtualLoop({
        workers: 8,
        groups: { concurrency: 2, overrides: { big: { concurrency: 3 } } },
      })
      let running = 0
      let peak = 0
      const order: number[] = []
      loop.on('work', async (m) => {
        running++
        peak = Math.max(peak, running)
        order.push(m.payload)
        await later(clock, 10)
        running--
      })
      for (let i = 0; i < 6; i++) loop.post('work', i, { group: 'a' })
      loop.post('work', 100) // no group
      await clock.advance(0)
      expect(order).toEqual([0, 1, 100])
      expect(loop.metrics().gauges.grouped).toBe(4)
      await clock.run()
      expect(order).toEqual([0, 1, 100, 2, 3, 4, 5])
      expect(peak).toBe(3) // two of `a` and the keyless one
    })

    it('keeps per-key order across groups', async () => {
      const { loop, clock } = virtualLoop({ workers: 4, groups: { concurrency: 1 } })
      const order: string[] = []
      loop.on('work', async (m) => {
        order.push(`${m.payload}`)
        await later(clock, 5)
      })
      loop.post('work', 1, { group: 'g', key: 'k' })
      loop.post('work', 2, { group: 'g', key: 'k2' }) // waits for the group
      loop.post('work', 3, { group: 'h', key: 'k2' }) // other group, but k2's earlier message waits
      await clock.run()
      expect(order).toEqual(['1', '2', '3'])
    })

    it('keeps a message’s group through a snapshot and its restore', async () => {
      const { loop, clock } = virtualLoop({ groups: { concurrency: 1 }, autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 1, { group: 'g' })
      const snapshot = await loop.stop({ deadlineMs: 0 })
      expect(snapshot.messages[0]?.group).toBe('g')
      const next = virtualLoop({ groups: { concurrency: 1 }, autoStart: false, clock })
      let running = 0
      let peak = 0
      next.loop.on('work', async () => {
        peak = Math.max(peak, ++running)
        await later(clock, 5)
        running--
      })
      next.loop.restore(snapshot)
      next.loop.post('work', 2, { group: 'g' })
      next.loop.start()
      await clock.run()
      expect(peak).toBe(1)
      expect(next.loop.metrics().counters.succeeded).toBe(2)
    })

    it('refuses bad group options with typed errors', () => {
      expect(thrown(() => virtualLoop({ groups: { concurrency: 0 } })).message).toBe(
        'Expected `options.groups.concurrency` to be an integer from 1 to 65536, got `0` (number)',
      )
      expect(thrown(() => virtualLoop({ groups: { overrides: { a: { concurency: 2 } as never } } })).message).toContain(
        'did you mean `concurrency`?',
      )
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      const e = thrown(() => loop.post('work', 1, { group: '' }))
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect(e.message).toBe(
        'Expected `options.group` to be a non-empty string of at most 256 characters, got `""` (string)',
      )
      expect(loop.metrics().counters.accepted).toBe(0)
    })
  })

  describe('cancel()', () => {
    it('cancels a queued, a delayed and a rate-limited message by id or message, once each', async () => {
      const { loop, clock } = virtualLoop({ workers: 1, autoStart: false })
      const cancelled: string[] = []
      loop.events.on('cancelled', (m) => cancelled.push(m.id))
      loop.on('work', () => {})
      const a = loop.post('work', 1)
      const b = loop.post('work', 2, { key: 'k' })
      const c = loop.postDelayed('work', 3, 100)
      expect(loop.cancel(a.id)).toBe('cancelled')
      expect(loop.cancel(a.id)).toBe('unknown')
      expect(loop.cancel(b)).toBe('cancelled')
      expect(loop.cancel(c.message.id)).toBe('cancelled')
      expect(c.pending).toBe(false)
      expect(loop.cancel('not-an-id')).toBe('unknown')
      expect(loop.queued).toBe(0)
      loop.start()
      await clock.run()
      expect(cancelled).toEqual([a.id, b.id, c.message.id])
      const counters = loop.metrics().counters
      expect(counters).toMatchObject({ accepted: 3, cancelled: 3, succeeded: 0 })
    })

    it('aborts a running handler with MessageCancelledError; the outcome is the handler’s', async () => {
      const { loop, clock } = virtualLoop()
      let reason: unknown
      loop.on(
        'work',
        (_m, ctx) =>
          new Promise<void>((resolve) =>
            ctx.signal.addEventListener('abort', () => {
              reason = ctx.signal.reason
              resolve()
            }),
          ),
      )
      const m = loop.post('work', 1)
      await clock.advance(0)
      expect(loop.cancel(m.id)).toBe('aborted')
      await clock.run()
      expect(reason).toBeInstanceOf(MessageCancelledError)
      expect((reason as Error).message).toBe(`Message ${m.id} was cancelled (loop.cancel())`)
      expect(loop.metrics().counters.succeeded).toBe(1)
    })

    it('cancels through the post’s signal, and at once for an aborted one', async () => {
      const { loop, clock } = virtualLoop({ autoStart: false })
      loop.on('work', () => {})
      const controller = new AbortController()
      loop.post('work', 1, { signal: controller.signal, key: 'k' })
      loop.post('work', 2, { key: 'k' })
      controller.abort()
      loop.post('work', 3, { signal: AbortSignal.abort() })
      loop.start()
      await clock.run()
      expect(loop.metrics().counters).toMatchObject({ accepted: 3, cancelled: 2, succeeded: 1 })
      expect(loop.sideTableSize).toBe(0)
    })
  })

  describe('request()', () => {
    it('resolves with the handler’s value, through middleware too', async () => {
      const { loop, clock } = virtualLoop()
      loop.use(async (_m, _ctx, next) => {
        await next()
        return 'ignored'
      })
      loop.on('work', async (m) => m.payload * 2)
      const answer = loop.request<'work', number>('work', 21)
      await clock.run()
      await expect(answer).resolves.toBe(42)
    })

    it('rejects with the outcome: dead-lettered (when asked) with its cause, cancelled, timed out, refused', async () => {
      const { loop, clock } = virtualLoop({ retry: { maxAttempts: 1 }, capacity: 2, autoStart: false })
      const boom = new Error('boom')
      loop.on('work', (m) => {
        if (m.payload === 1) throw boom
        return m.payload === 3 ? new Promise(() => {}) : undefined
      })
      const dead = loop.request('work', 1, { deadLetter: true }).catch((e: unknown) => e)
      const controller = new AbortController()
      const cancelled = loop.request('work', 2, { signal: controller.signal }).catch((e: unknown) => e)
      const full = loop.request('work', 9).catch((e: unknown) => e)
      controller.abort('user gave up')
      loop.start()
      const slow = loop.request('work', 3, { waitTimeoutMs: 50 }).catch((e: unknown) => e)
      await clock.advance(100)
      const [d, c, f, s] = (await Promise.all([dead, cancelled, full, slow])) as [
        RequestFailedError,
        RequestFailedError,
        Error,
        RequestFailedError,
      ]
      expect(d).toBeInstanceOf(RequestFailedError)
      expect(d.outcome).toBe('dead-lettered')
      expect(d.cause).toBe(boom)
      expect(c.outcome).toBe('cancelled')
      expect(c.cause).toBe('user gave up')
      expect((f as Error).name).toBe('QueueFullError')
      expect(s.outcome).toBe('timed-out')
      expect(s.message).toMatch(/^Request `work` .* timed-out: no outcome within 50 ms; the message is cancelled$/)
      await expect(loop.request('work', 4, { waitTimeoutMs: 0 })).rejects.toThrow(
        'Expected `options.waitTimeoutMs` to be a positive finite number of ms, got `0` (number)',
      )
    })

    it('rejects a request dropped at once by drop-new', async () => {
      const { loop } = virtualLoop({ capacity: 1, overflow: 'drop-new', autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 0)
      const e = (await loop.request('work', 1).catch((x: unknown) => x)) as RequestFailedError
      expect(e.outcome).toBe('dropped')
    })
  })

  describe('gate and timeLimit', () => {
    it('pauses dispatch while the gate is closed, polling, with an event for each change', async () => {
      let open = false
      const changes: GateChange[] = []
      const { loop, clock } = virtualLoop({ gate: { open: () => open, pollMs: 10 } })
      loop.events.on('gate', (c) => changes.push(c))
      const ran: number[] = []
      loop.on('work', (m) => void ran.push(m.payload))
      loop.post('work', 1)
      await clock.advance(25)
      expect(ran).toEqual([])
      expect(loop.metrics().gauges.gateClosed).toBe(true)
      open = true
      await clock.advance(10)
      expect(ran).toEqual([1])
      expect(changes).toEqual([
        { state: 'closed', at: 0, closedMs: 0 },
        { state: 'open', at: 30, closedMs: 30 },
      ])
    })

    it('reports no stall while work waits on purpose: for a rate limit, a closed gate, a loop budget', async () => {
      const stalls: string[] = []
      const { loop, clock } = virtualLoop({
        stall: { noProgressMs: 100, intervalMs: 50 },
        rateLimit: { max: 1, perMs: 10_000 },
      })
      loop.events.on('stall', (r) => stalls.push(r.kind))
      loop.on('work', () => {}, { rateLimit: { max: 1, perMs: 10_000 } })
      for (let i = 0; i < 3; i++) loop.post('work', i)
      await clock.advance(1000)
      expect(stalls).toEqual([])
      expect(loop.metrics().counters.succeeded).toBe(1)
      await loop.stop({ drain: false })
    })

    it('counts a throwing gate as closed and reports its error', async () => {
      const changes: GateChange[] = []
      const boom = new Error('pool gone')
      let calls = 0
      const { loop, clock } = virtualLoop({
        gate: {
          open: () => {
            if (++calls === 1) throw boom
            return true
          },
          pollMs: 10,
        },
      })
      loop.events.on('gate', (c) => changes.push(c))
      loop.on('work', () => {})
      loop.post('work', 1)
      await clock.run()
      expect(changes).toEqual([
        { state: 'closed', at: 0, closedMs: 0, error: boom },
        { state: 'open', at: 10, closedMs: 10 },
      ])
      expect(loop.metrics().counters.succeeded).toBe(1)
    })

    it('lets a rate-limited listener cancel the message or stop the loop, nothing lost', async () => {
      const { loop, clock } = virtualLoop({ workers: 2 })
      loop.on('work', () => {}, { rateLimit: { max: 1, perMs: 100 } })
      loop.events.on('rate-limited', (m) => {
        if (m.payload === 2) loop.cancel(m)
        if (m.payload === 3) void loop.stop({ deadlineMs: 0 })
      })
      for (let i = 1; i <= 4; i++) loop.post('work', i, { key: i === 4 ? 'k' : undefined })
      await clock.run()
      const snapshot = await loop.stop()
      const c = loop.metrics().counters
      expect(c).toMatchObject({ accepted: 4, succeeded: 1, cancelled: 1, snapshotted: 2 })
      expect(snapshot.messages.map((m) => m.payload)).toEqual([3, 4])
    })

    it('stops after maxRunMs with a snapshot of what is left', async () => {
      const reports: TimeLimitReport[] = []
      let delivered = -1
      const { loop, clock } = virtualLoop({
        workers: 1,
        timeLimit: {
          maxRunMs: 100,
          onSnapshot: (s) => {
            delivered = s.messages.length
          },
        },
      })
      loop.events.on('time-limit', (r) => reports.push(r))
      loop.on('work', () => later(clock, 30))
      for (let i = 0; i < 10; i++) loop.post('work', i)
      await clock.advance(200)
      await clock.run()
      expect(loop.state).toBe('stopped')
      expect(reports).toEqual([{ maxRunMs: 100, ranMs: 100 }])
      const c = loop.metrics().counters
      expect(c.succeeded + c.snapshotted).toBe(10)
      expect(delivered).toBe(c.snapshotted)
      expect(c.succeeded).toBe(3)
    })
  })
})
