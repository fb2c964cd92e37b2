/**
 * Regression tests for the defects listed in the core-stages issue, one `describe` per defect
 * (numbered as in the issue). Each failed before its fix.
 */
import { describe, expect, it, vi } from 'vitest'
import {
  createLoop,
  type DuplicateMessageError,
  FencedError,
  type HandlerContext,
  InvalidArgumentError,
  installShutdownHandlers,
  MemoryIdempotencyStore,
  NonRetryableError,
  QueueFullError,
  type SignalSource,
  VirtualClock,
} from '../src/index.js'
import { ended, type Messages, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('postAt() with a time in the past (defect 4)', () => {
    it('runs the message at once, whatever the past time, and frees its idempotency key', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      await clock.advance(1_000)
      const ran: number[] = []
      loop.on('work', (m) => {
        ran.push(m.payload)
      })
      const times = [999, 0, -1, -1e9, -Number.MAX_SAFE_INTEGER]
      const handles = times.map((at, i) => loop.postAt('work', i, at, { idempotencyKey: `k${i}` }))
      for (const h of handles) expect(h.dueAt).toBe(1_000)
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(ran).toEqual([0, 1, 2, 3, 4])
      const c = loop.metrics().counters
      expect(c).toMatchObject({ accepted: 5, succeeded: 5 })
      expect(ended(c)).toBe(c.accepted)
      // The keys were released as done: a second post of one is a duplicate, not a key held forever.
      expect(loop.tryPost('work', 9, { idempotencyKey: 'k2' })).toMatchObject({ ok: false, status: 'duplicate' })
      expect(loop.sideTableSize).toBe(0)
    })
  })

  describe('stop() options (defect 5)', () => {
    it('refuses an unknown option name with a typed error naming it, and changes nothing', () => {
      const { loop } = virtualLoop()
      const error = thrown(() => loop.stop({ deadline: 20_000 } as never))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain('options.deadline')
      expect(loop.state).toBe('running')
    })

    it('refuses options that are not an object', () => {
      const { loop } = virtualLoop()
      for (const bad of [5, 'drain', null, [true]]) {
        const error = thrown(() => loop.stop(bad as never))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect((error as InvalidArgumentError).argument).toBe('options')
      }
      expect(loop.state).toBe('running')
    })
  })

  describe('a delayed message that comes due while the queue is full (defect 6)', () => {
    for (const queue of ['levels', 'heap'] as const) {
      it(`starts its queue wait when it enters, and runs in due order (${queue})`, async () => {
        const { clock, loop } = virtualLoop({ workers: 1, capacity: 1, queue, overflow: 'reject' })
        const order: number[] = []
        let release = (): void => {}
        loop.on('work', (m) => {
          order.push(m.payload)
          return m.payload === 0 ? new Promise<void>((r) => (release = r)) : undefined
        })
        loop.post('work', 0) // runs and blocks the only worker
        await clock.advance(0)
        loop.post('work', 1) // fills the queue
        const late = loop.postDelayed('work', 3, 20) // scheduled first, due later
        const early = loop.postDelayed('work', 2, 10)
        await clock.advance(50) // both due, no room: they wait outside the queue
        release()
        const drained = loop.drain()
        await clock.run()
        await drained
        expect(order).toEqual([0, 1, 2, 3])
        expect(early.message.postedAt).toBeGreaterThanOrEqual(early.dueAt)
        expect(late.message.postedAt).toBeGreaterThanOrEqual(late.dueAt)
      })
    }
  })

  describe('agingMs: Infinity (defect 10)', () => {
    // The order every message starts in, for a mix of priorities and an unordered keyless retry.
    async function startOrder(queue: 'levels' | 'heap'): Promise<string[]> {
      const { clock, loop } = virtualLoop({
        workers: 1,
        queue,
        agingMs: Number.POSITIVE_INFINITY,
        retry: { maxAttempts: 2, baseMs: 5, jitter: 0 },
      })
      const order: string[] = []
      let failedOnce = false
      loop.on('work', (m) => {
        order.push(`${m.payload}@${m.priority}`)
        if (m.payload === 0 && !failedOnce) {
          failedOnce = true
          throw new Error('transient')
        }
      })
      loop.post('work', 0, { priority: 3 }) // fails once, retried after 5 ms
      await clock.advance(1)
      for (let i = 1; i <= 6; i++) loop.post('work', i, { priority: i % 2 === 0 ? 3 : 5 })
      loop.pause()
      await clock.advance(10) // the retry is back in the queue, behind what arrived meanwhile
      loop.resume()
      const drained = loop.drain()
      await clock.run()
      await drained
      return order
    }

    it('gives the same order with levels and heap, a keyless retry behind newer messages', async () => {
      const levels = await startOrder('levels')
      const heap = await startOrder('heap')
      expect(heap).toEqual(levels)
      expect(levels).toEqual(['0@3', '2@3', '4@3', '6@3', '0@3', '1@5', '3@5', '5@5'])
    })
  })

  describe('a committed message that will not run again (defect 3)', () => {
    // A loop whose handler commits, then fails once: the message backs off with its key committed.
    function committingLoop(options: Parameters<typeof virtualLoop>[0]) {
      const { clock, loop } = virtualLoop({
        workers: 1,
        capacity: 2,
        overflow: 'drop-oldest-lowest',
        retry: { maxAttempts: 3, baseMs: 10, jitter: 0, unknownMaxAttempts: 3 },
        ...options,
      })
      const effects: number[] = []
      loop.on('work', (m, ctx) => {
        if (m.payload !== 0) return
        if (ctx.committed === undefined) {
          effects.push(m.payload) // the side effect, then its commit point
          ctx.commit()
          throw new Error('failed after its side effect')
        }
      })
      return { clock, loop, effects }
    }

    it('is never evicted by drop-oldest-lowest after its back-off (an accepted retry is never shed)', async () => {
      const { clock, loop, effects } = committingLoop({})
      const dropped: number[] = []
      loop.events.on('dropped', (m) => dropped.push(m.payload as number))
      loop.post('work', 0, { idempotencyKey: 'pay-1', priority: 9 })
      await clock.advance(1) // attempt 1 committed and failed: backing off for 10 ms
      loop.pause()
      await clock.advance(20) // back in the queue
      for (let i = 1; i <= 3; i++) loop.post('work', i, { priority: 9 }) // a flood at the same level
      loop.resume()
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(dropped).not.toContain(0)
      expect(effects).toEqual([0])
      const c = loop.metrics().counters
      expect(c.succeeded).toBeGreaterThanOrEqual(1)
      expect(ended(c)).toBe(c.accepted)
    })

    it('keeps its key committed when a stop without drain cancels it, so a redelivery is a duplicate', async () => {
      const clock = new VirtualClock()
      const store = new MemoryIdempotencyStore(100, clock)
      const { loop, effects } = committingLoop({ clock, idempotency: { store } })
      loop.post('work', 0, { idempotencyKey: 'pay-2' })
      await clock.advance(1) // committed, failed, backing off
      const stopped = loop.stop({ drain: false })
      await clock.run()
      await stopped
      expect(loop.metrics().counters.cancelled).toBe(1)
      const next = createLoop<Messages>({ clock, logger: false, idempotency: { store } })
      next.on('work', () => {})
      const again = next.tryPost('work', 0, { idempotencyKey: 'pay-2' })
      expect(again).toMatchObject({ ok: false, status: 'duplicate' })
      expect((again as unknown as { error: DuplicateMessageError }).error.ledgerState).toBe('committed')
      expect(effects).toEqual([0])
      await next.stop()
    })
  })

  describe('a `random` option that misbehaves (defect 7)', () => {
    for (const [name, random] of [
      ['returns NaN', () => Number.NaN],
      [
        'throws',
        () => {
          throw new Error('entropy ran out')
        },
      ],
      ['returns 7', () => 7],
    ] as const) {
      it(`still retries and ends every message when it ${name}, and stop() resolves`, async () => {
        const warnings: string[] = []
        const { clock, loop } = virtualLoop({
          random,
          logger: { warn: (line) => warnings.push(line) },
          retry: { maxAttempts: 3, unknownMaxAttempts: 3, baseMs: 5 },
        })
        let calls = 0
        loop.on('work', () => {
          calls++
          if (calls < 3) throw new Error('transient')
        })
        loop.post('work', 1)
        const stopped = loop.stop()
        await clock.run()
        await stopped
        const c = loop.metrics().counters
        expect(c).toMatchObject({ accepted: 1, succeeded: 1, retried: 2 })
        expect(warnings.filter((w) => w.includes('`random`'))).toHaveLength(1)
      })
    }
  })

  describe('a refused tryPost (defect 19)', () => {
    it('builds no error on the result path; reading `error` gives the typed error with the numbers of the refusal', async () => {
      const { clock, loop } = virtualLoop({ capacity: 2, overflow: 'reject', autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 1)
      loop.post('work', 2)
      const refused = loop.tryPost('work', 3)
      expect(refused).toMatchObject({ ok: false, status: 'full' })
      expect(Object.getOwnPropertyDescriptor(refused, 'error')).toBeUndefined() // not built yet
      loop.start()
      const drained = loop.drain()
      await clock.run()
      await drained
      const error = (refused as { error: Error }).error
      expect(error).toBeInstanceOf(QueueFullError)
      expect((error as QueueFullError).load).toMatchObject({ queued: 2, capacity: 2 }) // at the refusal, not now
      expect((refused as { error: Error }).error).toBe(error) // built once
      expect(JSON.parse(JSON.stringify(refused))).toMatchObject({
        ok: false,
        status: 'full',
        error: { name: 'QueueFullError' },
      })
    })

    it('still hands `rejected` listeners the error', () => {
      const { loop } = virtualLoop({ capacity: 1, overflow: 'reject', autoStart: false })
      loop.on('work', () => {})
      const heard: Error[] = []
      loop.events.on('rejected', (_type, error) => heard.push(error))
      loop.post('work', 1)
      const refused = loop.tryPost('work', 2)
      expect(heard).toHaveLength(1)
      expect(heard[0]).toBe((refused as { error: Error }).error)
      expect(loop.metrics().counters.rejected).toBe(1)
    })
  })

  describe('long histories and hot keys (defect 15)', () => {
    it('restores a snapshot whose message has 200k attempts, all or nothing, without a RangeError', async () => {
      const { loop: first } = virtualLoop({ autoStart: false })
      first.on('work', () => {})
      first.post('work', 1)
      first.post('work', 2)
      const snapshot = await first.stop({ deadlineMs: 0 })
      const info = { name: 'Error', message: 'x', signature: 'Error: x', errorClass: 'unknown' } as const
      const attempts = Array.from({ length: 200_000 }, (_, i) => ({
        attempt: i + 1,
        startedAt: 0,
        durationMs: 1,
        outcome: 'failed' as const,
        error: info,
      }))
      const huge = {
        ...snapshot,
        messages: snapshot.messages.map((m, i) => (i === 1 ? { ...m, attempts } : m)),
      }
      const { clock, loop } = virtualLoop({ retry: { maxAttempts: 1 } })
      loop.on('work', () => {})
      expect(loop.restore(huge)).toBe(2)
      const drained = loop.drain()
      await clock.run()
      await drained
      expect(loop.metrics().counters).toMatchObject({ restored: 2, succeeded: 2 })
    })

    it('cancels 200k messages parked behind one busy key at a stop without drain', async () => {
      const { clock, loop } = virtualLoop({ workers: 2, capacity: 300_000 })
      let release = (): void => {}
      loop.on('work', (m) => (m.payload === 0 ? new Promise<void>((r) => (release = r)) : undefined))
      for (let i = 0; i < 200_001; i++) loop.post('work', i, { key: 'hot' })
      await clock.advance(0) // the first runs; the second worker parks the rest behind it
      expect(loop.metrics().gauges.parked).toBe(200_000)
      const stopped = loop.stop({ drain: false })
      release()
      await clock.run()
      await stopped
      const c = loop.metrics().counters
      expect(c).toMatchObject({ cancelled: 200_000, succeeded: 1 })
      expect(ended(c)).toBe(c.accepted)
    })
  })

  describe('ctx.post after the attempt ended (defect 11)', () => {
    for (const timeoutMs of [undefined, 1_000]) {
      it(`is fenced and counted, with${timeoutMs === undefined ? 'out' : ''} timeoutMs, even during a draining stop`, async () => {
        const { clock, loop } = virtualLoop(timeoutMs === undefined ? {} : { timeoutMs })
        let kept: HandlerContext<Messages> | undefined
        loop.on('work', (_m, ctx) => {
          kept = ctx
        })
        loop.post('work', 1)
        const stopping = loop.stop()
        await clock.run()
        expect(loop.metrics().counters.succeeded).toBe(1)
        expect(thrown(() => kept?.post('work', 2))).toBeInstanceOf(FencedError)
        expect(thrown(() => kept?.tryPost('work', 3))).toBeInstanceOf(FencedError)
        await stopping
        const c = loop.metrics().counters
        expect(c).toMatchObject({ accepted: 1, fenced: 2 })
      })
    }
  })

  describe('installShutdownHandlers() with several loops (defect 20)', () => {
    // A process whose signals reach every listener (as Node's do).
    function fakeProcess() {
      const listeners: [string, (signal: NodeJS.Signals) => void][] = []
      const exits: number[] = []
      const proc: SignalSource = {
        on: (signal, listener) => listeners.push([signal, listener]),
        removeListener: (signal, listener) => {
          const i = listeners.findIndex(([s, l]) => s === signal && l === listener)
          if (i >= 0) listeners.splice(i, 1)
        },
        exit: (code) => exits.push(code ?? 0),
      }
      const send = (s: NodeJS.Signals) => {
        for (const [signal, listener] of [...listeners]) if (signal === s) listener(s)
      }
      return { proc, exits, send, listeners }
    }
    // A loop whose one message takes `ms` of virtual time.
    function busyLoop(clock: VirtualClock, ms: number) {
      const loop = createLoop<Messages>({ clock, logger: false })
      loop.on('work', () => clock.sleep(ms))
      loop.post('work', ms)
      return loop
    }

    it('exits once, after every loop drained and every hook ran, in order', async () => {
      const clock = new VirtualClock()
      const fast = busyLoop(clock, 10)
      const slow = busyLoop(clock, 500)
      const { proc, exits, send, listeners } = fakeProcess()
      const steps: string[] = []
      installShutdownHandlers([fast, slow], {
        process: proc,
        deadlineMs: 1_000,
        beforeStop: [() => steps.push('http closed')],
        onSnapshot: (s, _signal, i) => steps.push(`snapshot ${i}: ${s.messages.length}`),
        close: [() => steps.push('pool closed')],
      })
      send('SIGTERM')
      await clock.advance(100)
      expect(exits).toEqual([]) // the fast loop is done; the slow one still drains
      await clock.advance(500)
      await vi.waitFor(() => expect(exits).toEqual([0]))
      expect(steps).toEqual(['http closed', 'snapshot 0: 0', 'snapshot 1: 0', 'pool closed'])
      expect(listeners).toHaveLength(0)
      expect(slow.metrics().counters.succeeded).toBe(1)
    })

    it('waits for a second installation on the same process, and exits 1 when any step failed', async () => {
      const clock = new VirtualClock()
      const first = busyLoop(clock, 10)
      const second = busyLoop(clock, 300)
      const { proc, exits, send } = fakeProcess()
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
      installShutdownHandlers(first, { process: proc, deadlineMs: 1_000 })
      installShutdownHandlers(second, {
        process: proc,
        deadlineMs: 1_000,
        close: [
          () => {
            throw new Error('pool would not close')
          },
        ],
      })
      send('SIGTERM')
      await clock.advance(50)
      expect(exits).toEqual([]) // the first installation finished: it must not end the process yet
      await clock.advance(300)
      await vi.waitFor(() => expect(exits).toEqual([1]))
      expect(second.metrics().counters.succeeded).toBe(1)
      expect(errors).toHaveBeenCalled()
      errors.mockRestore()
    })

    it('refuses a list without loops, and hooks that are not functions', () => {
      expect(thrown(() => installShutdownHandlers([]))).toBeInstanceOf(InvalidArgumentError)
      const { loop } = virtualLoop()
      const error = thrown(() => installShutdownHandlers(loop, { close: [5 as never] }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain('options.close[0]')
    })
  })

  describe('wall-clock timestamps (defect 21)', () => {
    it('dead letters and attempt records carry epoch times beside the monotonic readings', async () => {
      const clock = new VirtualClock(0, Date.UTC(2026, 11, 1))
      const loop = createLoop<Messages>({ clock, logger: false })
      loop.on('work', () => {
        throw new NonRetryableError('declined')
      })
      loop.post('work', 1)
      await clock.advance(250)
      const drained = loop.drain()
      await clock.run()
      await drained
      const [letter] = loop.deadLetters.list()
      expect(letter?.atEpochMs).toBe(Date.UTC(2026, 11, 1) + (letter?.at ?? Number.NaN))
      expect(letter?.attempts[0]?.startedAtEpochMs).toBe(Date.UTC(2026, 11, 1) + (letter?.attempts[0]?.startedAt ?? 0))
      expect(new Date(letter?.atEpochMs ?? 0).toISOString()).toMatch(/^2026-12-01T/)
    })
  })

  describe('post, send and on() options that throw when read (defect 15)', () => {
    const throwing = () => ({
      get priority(): number {
        throw new Error('getter exploded')
      },
    })
    const trapped = () =>
      new Proxy(
        {},
        {
          ownKeys() {
            throw new TypeError('trap')
          },
          get() {
            throw new TypeError('trap')
          },
        },
      )

    it('refuses them with an InvalidArgumentError naming the options, nothing admitted', async () => {
      const { loop } = virtualLoop({ autoStart: false })
      loop.on('work', () => {})
      for (const options of [throwing(), trapped()]) {
        const error = thrown(() => loop.post('work', 1, options as never))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect((error as InvalidArgumentError).argument).toMatch(/^options(\.priority)?$/) // the key whose read threw
        await expect(loop.send('work', 1, options as never)).rejects.toBeInstanceOf(InvalidArgumentError)
      }
      expect(loop.metrics().counters).toMatchObject({ posted: 4, accepted: 0, rejected: 4 })
      expect(loop.queued).toBe(0)
      const retry = {
        get retry(): object {
          throw new Error('nope')
        },
      }
      expect(thrown(() => loop.on('order.paid', () => {}, retry as never))).toBeInstanceOf(InvalidArgumentError)
    })
  })

  describe('the public front', () => {
    it('has no pool protocol to misuse (a user calling loop.take() silently lost a message)', () => {
      const { loop } = virtualLoop()
      for (const member of ['take', 'begin', 'end', 'invoke', 'commit', 'canDispatch', 'started', 'late', 'pumped']) {
        expect(member in loop, member).toBe(false)
      }
      // @ts-expect-error — not part of the public type either
      expect(loop.take).toBeUndefined()
    })
  })
})
