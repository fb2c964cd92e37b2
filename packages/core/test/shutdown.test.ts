import { describe, expect, it, vi } from 'vitest'
import {
  FencedError,
  installShutdownHandlers,
  type LoopSnapshot,
  LoopStoppingError,
  RetryableError,
  type SignalSource,
  SnapshotError,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

/** A loop with one slow handler, some of everything in flight, stopped with a deadline. */
async function stoppedWithLeftovers() {
  const { loop, clock } = virtualLoop({
    workers: 1,
    retry: { maxAttempts: 3, baseMs: 1000 },
    random: () => 0.5,
    circuitBreaker: { consecutiveFailures: 1, cooldownMs: 60_000 },
  })
  const effects: string[] = []
  const fenced: unknown[] = []
  loop.on('work', async (m, ctx) => {
    await clock.sleep(100)
    if (ctx.signal.aborted) {
      try {
        ctx.post('work', 99)
      } catch (error) {
        fenced.push(error)
      }
      return
    }
    effects.push(`work ${m.payload}`)
  })
  loop.on('order.paid', (m, ctx) => {
    if (ctx.attempt === 1) throw new RetryableError('503')
    effects.push(`paid ${m.payload.orderId}`)
  })
  loop.on('order.updated', () => {
    throw new RetryableError('ledger down') // opens its breaker at once
  })
  loop.post('order.updated', { orderId: 'u1', status: 'paid' })
  loop.post('order.paid', { orderId: 'p1', amount: 1 }, { key: 'p1', idempotencyKey: 'pay-p1' })
  await clock.advance(0) // u1 failed (breaker open), p1 failed (backing off 1 s)
  loop.post('order.updated', { orderId: 'u2', status: 'paid' }) // will be held
  loop.post('work', 1) // runs 100 ms
  loop.post('work', 2, { priority: 9 }) // queued behind it
  loop.postDelayed('work', 3, 5000)
  await clock.advance(0)
  const stopping = loop.stop({ deadlineMs: 50 })
  expect(thrown(() => loop.post('work', 4))).toBeInstanceOf(LoopStoppingError)
  await clock.advance(50)
  const snapshot = await stopping
  await clock.run() // the aborted handler wakes up: its effects are fenced
  return { loop, snapshot, effects, fenced }
}

describe('stop({ deadlineMs }) and snapshots', () => {
  it('drains until the deadline, then hands back every unfinished message as JSON-safe data', async () => {
    const { loop, snapshot, effects, fenced } = await stoppedWithLeftovers()
    expect(snapshot).toMatchObject({ format: 'flowing.snapshot', version: 1, drained: false })
    expect(snapshot.messages.map((m) => [m.type, m.state, m.dueInMs])).toEqual([
      ['order.updated', 'retry-scheduled', 950], // u1: its retry is due at 1000
      ['order.paid', 'retry-scheduled', 950],
      ['order.updated', 'held', undefined],
      ['work', 'running', undefined], // aborted at the deadline
      ['work', 'queued', undefined],
      ['work', 'delayed', 4950], // counted from the snapshot, not from when the stop began
    ])
    const paid = snapshot.messages[1]
    expect(paid).toMatchObject({ key: 'p1', idempotencyKey: 'pay-p1', priority: 5, hops: 0 })
    expect(paid?.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'failed', error: expect.objectContaining({ message: '503' }) }),
    ])
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot)
    expect(effects).toEqual([])
    expect(fenced).toHaveLength(1)
    expect(fenced[0]).toBeInstanceOf(FencedError)
    const c = loop.metrics().counters
    expect(c).toMatchObject({ accepted: 6, snapshotted: 6, deadLettered: 0, succeeded: 0, rejected: 1 })
    expect(c.accepted).toBe(c.succeeded + c.deadLettered + c.dropped + c.cancelled + c.snapshotted) // I1
    expect(loop.state).toBe('stopped')
  })

  it('resolves with an empty snapshot when everything finished first', async () => {
    const { loop, clock } = virtualLoop()
    loop.on('work', () => clock.sleep(10))
    loop.post('work', 1)
    const stopping = loop.stop({ deadlineMs: 1000 })
    await clock.run()
    const snapshot = await stopping
    expect(snapshot).toMatchObject({ drained: true, messages: [] })
    expect(clock.pending).toBe(0) // the deadline timer was cleared
  })

  it('cuts the drain short when its signal aborts, and a later shorter deadline wins', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    loop.on('work', () => clock.sleep(1000))
    loop.post('work', 1)
    loop.post('work', 2)
    const controller = new AbortController()
    const stopping = loop.stop({ signal: controller.signal })
    await clock.advance(1500)
    controller.abort()
    const snapshot = await stopping
    expect(snapshot.messages.map((m) => m.state)).toEqual(['running'])

    const second = virtualLoop({ workers: 1 })
    second.loop.on('work', () => second.clock.sleep(1000))
    second.loop.post('work', 1)
    const first = second.loop.stop({ deadlineMs: 10_000 })
    expect(second.loop.stop({ deadlineMs: 10 })).toBe(first)
    await second.clock.advance(10)
    expect((await first).messages.map((m) => m.state)).toEqual(['running'])
  })

  it('refuses bad stop options with typed errors', () => {
    const { loop } = virtualLoop()
    expect(thrown(() => loop.stop({ deadlineMs: -1 })).message).toContain('options.deadlineMs')
    expect(thrown(() => loop.stop({ signal: 'x' as never })).message).toContain(
      'Expected `options.signal` to be an AbortSignal',
    )
    expect(loop.state).toBe('running')
  })
})

describe('restore()', () => {
  it('re-admits everything: delays and attempt counts continue, keys and checkpoints are kept', async () => {
    const { snapshot } = await stoppedWithLeftovers()
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 1000 }, random: () => 0.5 })
    const runs: string[] = []
    loop.on('work', (m, ctx) => {
      runs.push(`work ${m.payload} #${ctx.attempt} @${clock.now()}`)
    })
    loop.on('order.paid', (m, ctx) => {
      runs.push(`paid ${m.payload.orderId} #${ctx.attempt} @${clock.now()}`)
    })
    loop.on('order.updated', (m, ctx) => {
      runs.push(`updated ${m.payload.orderId} #${ctx.attempt} @${clock.now()}`)
    })
    vi.spyOn(Date, 'now').mockReturnValue(snapshot.takenAt) // restored the instant it was taken
    expect(loop.restore(snapshot)).toBe(6)
    vi.restoreAllMocks()
    expect(loop.tryPost('order.paid', { orderId: 'p1', amount: 1 }, { idempotencyKey: 'pay-p1' }).status).toBe(
      'duplicate',
    )
    await clock.run()
    expect(runs).toEqual([
      'updated u2 #1 @0',
      'work 1 #1 @0', // the interrupted attempt did not count
      'work 2 #1 @0',
      'paid p1 #2 @950', // an ordered retry keeps its original rank
      'updated u1 #2 @950',
      'work 3 #1 @4950',
    ])
    expect(loop.metrics().counters).toMatchObject({ posted: 7, accepted: 6, restored: 6, succeeded: 6 })
  })

  it('resumes after a commit point across the restart', async () => {
    const first = virtualLoop({ workers: 1 })
    const charges: string[] = []
    first.loop.on('order.paid', async (m, ctx) => {
      if (ctx.committed === undefined) {
        charges.push(m.payload.orderId)
        ctx.commit({ chargeId: 'ch-1' })
      }
      await first.clock.sleep(1000) // the receipt takes long: the stop interrupts it
    })
    first.loop.post('order.paid', { orderId: 'o-1', amount: 5 }, { idempotencyKey: 'o-1' })
    await first.clock.advance(0)
    const stopping = first.loop.stop({ deadlineMs: 10 })
    await first.clock.advance(10)
    const snapshot = await stopping
    expect(snapshot.messages[0]).toMatchObject({ state: 'running', checkpoint: { chargeId: 'ch-1' } })

    const second = virtualLoop()
    const receipts: unknown[] = []
    second.loop.on('order.paid', (_m, ctx) => {
      if (ctx.committed === undefined) charges.push('again!')
      receipts.push(ctx.committed)
    })
    second.loop.restore(JSON.parse(JSON.stringify(snapshot)) as LoopSnapshot)
    await second.clock.run()
    expect(charges).toEqual(['o-1'])
    expect(receipts).toEqual([{ chargeId: 'ch-1' }])
  })

  it('restores nothing from a malformed, truncated, foreign or wrong-version snapshot', async () => {
    const { snapshot } = await stoppedWithLeftovers()
    const json = JSON.stringify(snapshot)
    const cases: [unknown, string][] = [
      ['not a snapshot', 'Cannot restore the snapshot: must be an object, got "not a snapshot"; nothing was restored'],
      [{ ...snapshot, format: 'bullmq' }, '`format` must be "flowing.snapshot", got "bullmq"'],
      [{ ...snapshot, version: 2 }, '`version` must be 1 (this release reads version 1), got 2'],
      [{ ...snapshot, messages: undefined }, '`messages` must be an array, got nothing'],
      [
        { ...snapshot, messages: [...snapshot.messages, { ...snapshot.messages[0], priority: 12 }] },
        '`messages[6].priority` must be an integer from 0 to 9, got 12',
      ],
      [{ ...snapshot, messages: [...snapshot.messages, snapshot.messages[0]] }, '`messages[6].id` repeats'],
      [
        { ...snapshot, messages: [{ ...snapshot.messages[5], dueInMs: undefined }] },
        '`messages[0].dueInMs` must be a non-negative number of ms for a delayed message',
      ],
      [
        { ...snapshot, messages: [{ ...snapshot.messages[0], type: 'nope' }] },
        '`messages[0].type` No handler registered for message type `"nope"`',
      ],
      [
        { ...snapshot, messages: [{ ...snapshot.messages[1], attempts: [{ attempt: 2 }] }] },
        '`messages[0].attempts[0].attempt` must be 1',
      ],
    ]
    for (const [bad, message] of cases) {
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      loop.on('order.paid', () => {})
      loop.on('order.updated', () => {})
      const before = loop.metrics()
      const error = thrown(() => loop.restore(bad as LoopSnapshot))
      expect(error).toBeInstanceOf(SnapshotError)
      expect(error.message).toContain(message)
      expect(loop.metrics().counters).toEqual(before.counters) // nothing changed
      expect(loop.queued).toBe(0)
    }
    // Truncated JSON never parses; a cut-off message list is caught field by field.
    expect(() => JSON.parse(json.slice(0, json.length / 2))).toThrow(SyntaxError)
  })

  it('refuses a snapshot that does not fit, or one restored twice, without admitting any of it', async () => {
    const { snapshot } = await stoppedWithLeftovers()
    const small = virtualLoop({ capacity: 2, autoStart: false })
    for (const type of ['work', 'order.paid', 'order.updated'] as const) small.loop.on(type, () => {})
    expect(thrown(() => small.loop.restore(snapshot)).message).toContain('needs 5 free places in the queue, 2 are free')
    expect(small.loop.queued).toBe(0)

    const twice = virtualLoop({ autoStart: false })
    for (const type of ['work', 'order.paid', 'order.updated'] as const) twice.loop.on(type, () => {})
    twice.loop.restore(snapshot)
    expect(thrown(() => twice.loop.restore(snapshot)).message).toContain(
      '`messages[1].idempotencyKey` "pay-p1" is in flight in this loop (was the snapshot restored twice?)',
    )
    expect(twice.loop.queued).toBe(5) // 3 waiting + 2 retries keeping their places
  })
})

describe('restore() and the ledger', () => {
  it('skips messages whose key is done since: restoring the same snapshot again runs nothing twice', async () => {
    const { loop, clock } = virtualLoop({ autoStart: false })
    const runs: number[] = []
    loop.on('work', (m) => {
      runs.push(m.payload)
    })
    loop.post('work', 1, { idempotencyKey: 'k1' })
    loop.post('work', 2) // no key: nothing can tell it ran
    const snapshot = await loop.stop({ deadlineMs: 0 })
    const next = virtualLoop()
    next.loop.on('work', (m) => {
      runs.push(m.payload)
    })
    const restored: [number, number][] = []
    next.loop.events.on('restored', (count, skipped) => restored.push([count, skipped]))
    expect(next.loop.restore(snapshot)).toBe(2)
    await next.clock.run()
    expect(next.loop.restore(snapshot)).toBe(1) // k1 is done: skipped
    await next.clock.run()
    expect(runs).toEqual([1, 2, 2])
    expect(restored).toEqual([
      [2, 0],
      [1, 1],
    ])
    expect(next.loop.metrics().counters).toMatchObject({ restored: 3, duplicates: 1 })
    void clock
  })

  it('restores an undefined payload (JSON drops it)', async () => {
    const { loop } = virtualLoop({ autoStart: false })
    loop.on('work', () => {})
    loop.post('work', undefined as never)
    const snapshot = JSON.parse(JSON.stringify(await loop.stop({ deadlineMs: 0 }))) as LoopSnapshot
    const next = virtualLoop()
    const payloads: unknown[] = []
    next.loop.on('work', (m) => {
      payloads.push(m.payload)
    })
    expect(next.loop.restore(snapshot)).toBe(1)
    await next.clock.run()
    expect(payloads).toEqual([undefined])
  })

  it('refuses postDelayed during a stop with LoopStoppingError', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    void loop.stop({ deadlineMs: 10 })
    expect(thrown(() => loop.postDelayed('work', 1, 10))).toBeInstanceOf(LoopStoppingError)
  })
})

describe('installShutdownHandlers()', () => {
  function fakeProcess() {
    const listeners = new Map<string, (signal: NodeJS.Signals) => void>()
    const exits: number[] = []
    const proc: SignalSource = {
      on: (signal, listener) => listeners.set(signal, listener),
      removeListener: (signal) => listeners.delete(signal),
      exit: (code) => exits.push(code ?? 0),
    }
    return { proc, listeners, exits, send: (s: NodeJS.Signals) => listeners.get(s)?.(s) }
  }

  it('stops on the first signal with the deadline, hands over the snapshot, removes itself, exits', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    loop.on('work', () => clock.sleep(1000))
    loop.post('work', 1)
    loop.post('work', 2)
    const { proc, listeners, exits, send } = fakeProcess()
    const snapshots: [LoopSnapshot, string][] = []
    installShutdownHandlers(loop, {
      deadlineMs: 1500,
      process: proc,
      onSnapshot: (s, signal) => {
        snapshots.push([s, signal])
      },
    })
    expect([...listeners.keys()]).toEqual(['SIGTERM', 'SIGINT'])
    send('SIGTERM')
    await clock.advance(1500)
    await vi.waitFor(() => expect(exits).toEqual([0]))
    expect(snapshots.map(([s, signal]) => [s.messages.map((m) => m.state), signal])).toEqual([[['running'], 'SIGTERM']])
    expect(listeners.size).toBe(0)
  })

  it('a second signal stops at once; a failing onSnapshot exits with 1', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    loop.on('work', () => clock.sleep(1000))
    loop.post('work', 1)
    const { proc, exits, send } = fakeProcess()
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    installShutdownHandlers(loop, {
      deadlineMs: 60_000,
      process: proc,
      onSnapshot: () => {
        throw new Error('disk full')
      },
    })
    send('SIGINT')
    send('SIGINT')
    await vi.waitFor(() => expect(exits).toEqual([1]))
    expect(error).toHaveBeenCalledWith('[flowing] shutdown of loop 0 failed:', new Error('disk full'))
    error.mockRestore()
  })

  it('refuses bad options', () => {
    const { loop } = virtualLoop()
    expect(thrown(() => installShutdownHandlers(loop, { signals: [] })).message).toContain(
      'Expected `options.signals` to be a non-empty array of signal names',
    )
    expect(thrown(() => installShutdownHandlers(loop, { deadlineMs: -5 })).message).toContain('options.deadlineMs')
  })
})

describe('failure exit', () => {
  it('stops the loop with a snapshot when the failure rate passes the threshold', async () => {
    const reports: unknown[] = []
    const snapshots: LoopSnapshot[] = []
    const { loop, clock } = virtualLoop({
      workers: 1,
      failureExit: {
        failureRate: 0.5,
        minVolume: 4,
        windowMs: 10_000,
        onSnapshot: (s, report) => {
          snapshots.push(s)
          reports.push(report)
        },
      },
    })
    loop.on('work', (m) => {
      if (m.payload >= 2) throw new RetryableError('down')
    })
    const events: unknown[] = []
    loop.events.on('failure-exit', (r) => events.push(r))
    for (let i = 0; i < 10; i++) loop.post('work', i)
    await clock.run()
    await vi.waitFor(() => expect(snapshots).toHaveLength(1))
    expect(events).toEqual([{ failureRate: 0.5, attempts: 4, failures: 2, windowMs: 10_000 }])
    expect(reports).toEqual(events)
    expect(loop.state).toBe('stopped')
    const c = loop.metrics().counters
    expect(c).toMatchObject({ succeeded: 2, deadLettered: 2, snapshotted: 6 })
    expect(snapshots[0]?.messages.map((m) => m.payload)).toEqual([4, 5, 6, 7, 8, 9])
  })
})
