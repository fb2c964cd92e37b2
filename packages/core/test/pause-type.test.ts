/**
 * `loop.controls.pauseType(type)` / `resumeType(type)` / `pausedTypes()`: a paused type's messages are
 * admitted but held at their places — as by an open breaker, their keys kept — until the type resumes.
 * Everything on virtual time.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  type MessageKey,
  UnknownMessageTypeError,
  VirtualClock,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

const paid = (orderId: string) => ({ orderId, amount: 1 })

describe('pauseType() / resumeType()', () => {
  it('admits a paused type’s messages but starts none of them while other types run; resume runs them in post order', async () => {
    const { loop, clock } = virtualLoop({ workers: 2 })
    const runs: string[] = []
    loop.on('work', (m) => void runs.push(`work ${m.payload}@${clock.now()}`))
    loop.on('order.paid', (m) => void runs.push(`paid ${m.payload.orderId}@${clock.now()}`))
    expect(loop.controls.pauseType('work')).toBe(loop.controls)
    for (const i of [1, 2, 3]) loop.post('work', i)
    loop.post('order.paid', paid('a'))
    await clock.advance(10)
    expect(runs).toEqual(['paid a@0'])
    expect(loop.controls.pausedTypes()).toEqual(['work'])
    expect(loop.metrics().counters).toMatchObject({ posted: 4, accepted: 4, succeeded: 1, held: 0 })
    expect(loop.metrics().gauges).toMatchObject({ held: 3, queued: 3, running: 0 })
    expect(loop.controls.resumeType('work')).toBe(loop.controls)
    await clock.advance(0)
    expect(runs).toEqual(['paid a@0', 'work 1@10', 'work 2@10', 'work 3@10'])
    expect(loop.controls.pausedTypes()).toEqual([])
    expect(loop.metrics().gauges).toMatchObject({ held: 0, queued: 0 })
  })

  it('keeps per-key order: a later message of another type on the paused message’s key waits behind it', async () => {
    const { loop, clock } = virtualLoop({ workers: 4 })
    const runs: string[] = []
    loop.on('work', (m) => void runs.push(`work ${m.payload}`))
    loop.on('order.paid', (m) => void runs.push(`paid ${m.payload.orderId}`))
    loop.controls.pauseType('work')
    await clock.advance(5)
    const held = loop.post('work', 1, { key: 'k' })
    loop.post('order.paid', paid('same key'), { key: 'k' })
    loop.post('order.paid', paid('other key'), { key: 'j' })
    await clock.advance(10)
    expect(runs).toEqual(['paid other key'])
    const now = loop.inspect()
    expect(now.keys).toEqual([
      { key: 'k', holder: { id: held.id, type: 'work', state: 'held', since: 5, attempt: 1 }, waiting: 1 },
    ])
    expect(loop.metrics().gauges).toMatchObject({ held: 1, parked: 1 })
    expect(loop.trace(held.id)?.transitions.map((t) => [t.state, t.detail])).toEqual([
      ['queued', undefined],
      ['held', 'paused'],
    ])
    loop.controls.resumeType('work')
    await clock.advance(0)
    expect(runs).toEqual(['paid other key', 'work 1', 'paid same key'])
    expect(loop.trace(held.id)?.transitions.map((t) => t.detail)).toContain('released: its type resumed')
  })

  it('holds what reaches the front after the pause; attempts already running finish', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    const runs: string[] = []
    loop.on('work', async (m) => {
      await clock.sleep(10)
      runs.push(`work ${m.payload}@${clock.now()}`)
    })
    for (const i of [1, 2]) loop.post('work', i)
    await clock.advance(1) // 1 runs, 2 waits in the queue
    loop.controls.pauseType('work').pauseType('work') // twice: one pause
    await clock.advance(100)
    expect(runs).toEqual(['work 1@10'])
    expect(loop.metrics().gauges.held).toBe(1)
    loop.controls.resumeType('work').resumeType('work') // twice: the second does nothing
    await clock.advance(100)
    expect(runs).toEqual(['work 1@10', 'work 2@111'])
  })

  it('cancels a paused message, and the key it kept moves on', async () => {
    const { loop, clock } = virtualLoop({ workers: 2 })
    const runs: string[] = []
    loop.on('work', (m) => void runs.push(`work ${m.payload}`))
    loop.on('order.paid', (m) => void runs.push(`paid ${m.payload.orderId}`))
    loop.controls.pauseType('work')
    const held = loop.post('work', 1, { key: 'k' })
    loop.post('order.paid', paid('behind'), { key: 'k' })
    await clock.advance(0)
    expect(runs).toEqual([])
    expect(loop.cancel(held.id)).toBe('cancelled')
    await clock.advance(0)
    expect(runs).toEqual(['paid behind'])
    expect(loop.metrics().counters).toMatchObject({ cancelled: 1, succeeded: 1 })
    expect(loop.metrics().gauges.held).toBe(0)
    loop.controls.resumeType('work')
    await clock.advance(0)
    expect(runs).toEqual(['paid behind'])
  })

  it('works beside circuit breakers: a paused message takes no probe slot, and a stop without drain cancels it', async () => {
    const { loop, clock } = virtualLoop({ workers: 2, circuitBreaker: { cooldownMs: 100 } })
    const runs: string[] = []
    loop.on('work', (m) => void runs.push(`work ${m.payload}`))
    loop.on('order.paid', (m) => void runs.push(`paid ${m.payload.orderId}`))
    loop.controls.openCircuit('order.paid')
    loop.controls.pauseType('work')
    loop.post('work', 1)
    loop.post('order.paid', paid('a'))
    await clock.advance(50)
    expect(loop.metrics().gauges.held).toBe(2)
    expect(loop.circuits()).toEqual([{ route: 'order.paid', state: 'open', held: 1 }])
    await clock.advance(50) // the breaker half-opens: its probe runs and closes it
    expect(runs).toEqual(['paid a'])
    await loop.stop({ drain: false })
    expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 1, cancelled: 1 })
    expect(loop.metrics().gauges.held).toBe(0)
  })

  it('hands paused messages back as held in a snapshot, and a restored loop runs them', async () => {
    const { loop, clock } = virtualLoop({ workers: 2 })
    loop.on('work', () => {})
    loop.on('order.paid', () => {})
    loop.controls.pauseType('work')
    loop.post('work', 1, { key: 'k' })
    loop.post('order.paid', paid('behind'), { key: 'k' })
    await clock.advance(0)
    const stopping = loop.stop({ deadlineMs: 100 })
    await clock.advance(100)
    const snapshot = await stopping
    expect(snapshot.messages.map((m) => [m.type, m.state, m.key])).toEqual([
      ['work', 'held', 'k'],
      ['order.paid', 'queued', 'k'],
    ])
    expect(loop.metrics().counters).toMatchObject({ accepted: 2, snapshotted: 2 })

    const next = virtualLoop({ workers: 2 })
    const runs: string[] = []
    next.loop.on('work', (m) => void runs.push(`work ${m.payload}`))
    next.loop.on('order.paid', (m) => void runs.push(`paid ${m.payload.orderId}`))
    next.loop.restore(snapshot)
    await next.clock.advance(0)
    expect(runs).toEqual(['work 1', 'paid behind'])
  })

  it('refuses a bad or unknown type as openCircuit does, changing nothing', () => {
    const { loop } = virtualLoop({ workers: 1 })
    loop.on('work', () => {})
    for (const bad of [42, '', undefined, null]) {
      for (const call of [loop.controls.pauseType, loop.controls.resumeType]) {
        const error = thrown(() => call.call(loop.controls, bad as unknown as 'work'))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect(error.message).toContain('`type`')
      }
    }
    const unknown = thrown(() => loop.controls.pauseType('nope' as 'work'))
    expect(unknown).toBeInstanceOf(UnknownMessageTypeError)
    expect(unknown.message).toContain('registered types: `work`')
    expect(thrown(() => loop.controls.resumeType('nope' as 'work'))).toBeInstanceOf(UnknownMessageTypeError)
    expect(loop.controls.pausedTypes()).toEqual([])
  })

  it('runs every message once, in per-key post order, none while its type is paused (property, on virtual time)', async () => {
    const types = ['a', 'b', 'c'] as const
    type T = (typeof types)[number]
    const step = fc.oneof(
      fc.record({ post: fc.constantFrom(...types), key: fc.integer({ min: 0, max: 3 }), ms: fc.nat(5) }),
      fc.record({ pause: fc.constantFrom(...types) }),
      fc.record({ resume: fc.constantFrom(...types) }),
      fc.record({ advance: fc.nat(8) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), fc.boolean(), async (steps, breakers) => {
        const clock = new VirtualClock()
        type Work = { n: number; ms: number }
        const loop = createLoop<Record<T, Work>>({ clock, workers: 3, logger: false, circuitBreaker: breakers })
        const paused = new Set<T>()
        const running = new Set<MessageKey>()
        const started: { n: number; key: MessageKey }[] = []
        const posted: { n: number; key: MessageKey }[] = []
        const wrong: string[] = []
        for (const type of types) {
          loop.on(type, async (m) => {
            if (paused.has(type)) wrong.push(`${type} ${m.payload.n} started while paused`)
            const key = m.key as MessageKey
            if (running.has(key)) wrong.push(`${key} ran twice at once`)
            running.add(key)
            started.push({ n: m.payload.n, key })
            await clock.sleep(m.payload.ms)
            running.delete(key)
          })
        }
        for (const s of steps) {
          if ('post' in s) {
            const key = `k${s.key}`
            posted.push({ n: posted.length, key })
            loop.post(s.post, { n: posted.length - 1, ms: s.ms }, { key })
          } else if ('pause' in s) {
            loop.controls.pauseType(s.pause)
            paused.add(s.pause)
          } else if ('resume' in s) {
            loop.controls.resumeType(s.resume)
            paused.delete(s.resume)
          } else await clock.advance(s.advance)
        }
        expect(loop.controls.pausedTypes().sort()).toEqual([...paused].sort())
        for (const type of types) loop.controls.resumeType(type)
        paused.clear()
        await clock.run()
        expect(wrong).toEqual([])
        expect(started.map((s) => s.n).sort((x, y) => x - y)).toEqual(posted.map((p) => p.n))
        for (const key of new Set(posted.map((p) => p.key))) {
          const order = (list: { n: number; key: MessageKey }[]) => list.filter((x) => x.key === key).map((x) => x.n)
          expect(order(started)).toEqual(order(posted))
        }
        expect(loop.metrics().gauges).toMatchObject({ held: 0, queued: 0, running: 0 })
      }),
      { numRuns: 200 },
    )
  })
})
