/**
 * Regression tests of defects an outside review found in keyed jobs and schedules (each failed before
 * its fix): stops that escalate, limits and backfills, refused upserts, follow-ups with a job key,
 * draining stops of journaled loops, restores into a running loop, removals before start, retries
 * after a stop, pauses, keyed `tryPost` refusals, hostile specs, jitter over the interval.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createLoop, isFlowingError, MemoryStore, VirtualClock } from '../src/index.js'
import { FlakyStore } from './fixtures.js'

type Msgs = { tick: { n: number }; a: number; b: number; busy: string }
const H = 3_600_000
const T0 = Date.UTC(2026, 0, 1)

function mk(o: object = {}, epoch = T0) {
  const clock = new VirtualClock(0, epoch)
  const loop = createLoop<Msgs>({ clock, logger: false, ...o })
  const fires: string[] = []
  loop.on('tick', (m) => void fires.push(m.headers['flowing-fire-at'] as string))
  return { clock, loop, fires }
}

async function flushed(loop: { flushed(): Promise<void> }, clock: VirtualClock) {
  const done = loop.flushed()
  await clock.advance(0)
  await done
}

afterEach(() => void vi.restoreAllMocks())

describe('keyed jobs and schedules: regressions', () => {
  it('a stop without drain but with a deadline hands delayed messages back, not cancels them', async () => {
    const { clock, loop } = mk()
    loop.on('a', () => {})
    loop.postDelayed('a', 1, 60_000)
    const stopping = loop.stop({ drain: false, deadlineMs: 1_000 })
    await clock.advance(1_000)
    expect((await stopping).messages.map((m) => m.state)).toEqual(['delayed'])
  })

  it('backfilled missed fires stop at the limit', async () => {
    const store = new MemoryStore('m', () => Date.now())
    const boot = (at: number, s: MemoryStore) => {
      const r = mk({ store: s }, at)
      r.loop.schedule('s', { cron: '0 * * * *', limit: 2, missed: { backfill: 10 } }, 'tick', { n: 1 })
      r.loop.start()
      return r
    }
    const first = boot(T0 + 30 * 60_000, store)
    await flushed(first.loop, first.clock)
    const second = boot(T0 + 5.5 * H, store.reopen())
    await second.clock.advance(10 * H)
    expect(second.fires.length).toBe(2)
  })

  it('a refused upsert leaves the schedule as it was; a time past the Date range is a typed error', async () => {
    const clock = new VirtualClock(0, T0)
    const loop = createLoop<Msgs>({ clock, logger: false })
    const fires: string[] = []
    const checkPayload = (p: unknown) => {
      if ((p as { n: number }).n < 0) throw new Error('negative')
    }
    loop.on('tick', (m) => void fires.push(m.headers['flowing-fire-at'] as string), { checkPayload })
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    expect(() => loop.schedule('s', { every: 60_000 }, 'tick', { n: -1 })).toThrow(/checkPayload/)
    let e: unknown
    try {
      loop.schedule('s', { every: 60_000, startAt: 1e20 }, 'tick', { n: 1 })
    } catch (x) {
      e = x
    }
    expect(isFlowingError(e)).toBe(true)
    await clock.advance(180_000)
    expect(fires.length).toBe(3)
  })

  it('a follow-up posted with a job key that waits keeps its origin', async () => {
    const { clock, loop } = mk()
    let parent = ''
    const seen: [number, string][] = []
    loop.on('a', (m, ctx) => {
      parent = m.traceId
      ctx.post('b', 2, { jobKey: 'k', jobKeyMode: 'preserve_run_at' })
    })
    loop.on('b', (m) => void seen.push([m.hops, m.traceId]))
    loop.postDelayed('b', 1, 1000, { jobKey: 'k' })
    loop.post('a', 1)
    await clock.advance(2000)
    expect(seen).toEqual([[1, parent]])
  })

  it('a draining stop of a journaled loop ends while a schedule keeps firing', async () => {
    const store = new MemoryStore('m', () => Date.now())
    const { clock, loop } = mk({ store, workers: 1 })
    loop.on('tick', () => clock.sleep(1_500), { replace: true })
    loop.schedule('s', { every: 1_000 }, 'tick', { n: 1 })
    loop.start()
    await clock.advance(1_100)
    let stopped = false
    void loop.stop().then(() => {
      stopped = true
    })
    await clock.advance(60_000)
    expect(stopped).toBe(true)
    const next = mk({ store: store.reopen() }, clock.wallNow())
    next.loop.start()
    expect(next.loop.schedules.get('s')).toMatchObject({ paused: false }) // the journal kept it
  })

  it("a restore into a running loop leaves this loop's own schedules alone", async () => {
    const { clock, loop, fires } = mk()
    vi.spyOn(Math, 'random').mockReturnValue(0.9)
    loop.schedule('s', { every: 60_000, jitterMs: 30_000, missed: 'skip' }, 'tick', { n: 1 })
    await clock.advance(70_000) // due at 60 s, jittered to 87 s
    const other = mk()
    other.loop.on('a', () => {})
    other.loop.postDelayed('a', 1, 5_000)
    loop.on('a', () => {})
    loop.restore(JSON.parse(JSON.stringify(await other.loop.stop({ deadlineMs: 0 }))))
    await clock.advance(30_000)
    expect(fires).toEqual(['2026-01-01T00:01:00.000Z'])
  })

  it('remove() before start() removes the schedule the journal kept', async () => {
    const store = new MemoryStore('m', () => Date.now())
    const first = mk({ store })
    first.loop.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    first.loop.start()
    await flushed(first.loop, first.clock)
    const second = mk({ store: store.reopen() }, T0 + 60_000)
    second.loop.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    expect(second.loop.schedules.remove('s')).toBe(true)
    second.loop.start()
    await second.clock.advance(3 * H)
    expect(second.fires).toEqual([])
    expect(second.loop.schedules.list()).toEqual([])
  })

  it('a refused next fire is not retried once the loop stopped', async () => {
    const clock = new VirtualClock(0, T0)
    const store = new FlakyStore('flaky', () => clock.wallNow())
    const loop = createLoop<Msgs>({ clock, store, logger: false })
    loop.on('tick', () => {})
    const refused: string[] = []
    loop.events.on('schedule-refused', (_id, e) => void refused.push((e as Error).name))
    loop.events.on('store-error', () => {})
    loop.start()
    loop.schedule('s', { every: 1000 }, 'tick', { n: 1 })
    await clock.advance(0)
    store.failing = true
    loop.tryPost('tick', { n: 0 })
    await clock.advance(1_500)
    expect(refused.length).toBeGreaterThan(0)
    const stopped = loop.stop({ drain: false })
    store.failing = false
    await clock.advance(2_000)
    await stopped
    const before = refused.length
    await clock.advance(60_000)
    expect(refused.length - before).toBe(0)
  })

  it('the same definition again leaves a paused schedule paused', async () => {
    const { clock, loop, fires } = mk()
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    loop.schedules.pause('s')
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    await clock.advance(5 * 60_000)
    expect(fires).toEqual([])
    expect(loop.schedules.get('s')?.paused).toBe(true)
  })

  it('a keyed tryPost that would wait answers a refusal instead of throwing', () => {
    const { loop } = mk({ maxDelayed: 1 })
    loop.on('a', () => {})
    loop.postDelayed('a', 1, 5_000, { jobKey: 'k' })
    expect(loop.tryPost('a', 2, { jobKey: 'k', jobKeyMode: 'preserve_run_at' })).toMatchObject({
      ok: false,
      status: 'full',
    })
  })

  it('hostile specs and options are typed errors', () => {
    const { loop } = mk()
    const hostile: [unknown, unknown?][] = [
      [
        {
          get cron() {
            throw new Error('g')
          },
        },
      ],
      [{ every: 1000, startAt: new Proxy(new Date(), {}) }],
      [
        {
          every: 1000,
          missed: {
            get backfill() {
              throw new Error('g')
            },
          },
        },
      ],
      [
        { every: 1000 },
        {
          get priority() {
            throw new Error('g')
          },
        },
      ],
    ]
    for (const [spec, o] of hostile) {
      let e: unknown
      try {
        loop.schedule('s', spec as never, 'tick', { n: 1 }, o as never)
      } catch (x) {
        e = x
      }
      expect(isFlowingError(e)).toBe(true)
    }
    expect(loop.schedules.list()).toEqual([])
  })

  it('a schedule with no due time left is refused, not registered', () => {
    const { loop } = mk()
    const spec = { every: 1000, startAt: Date.UTC(2024, 0, 1), endAt: Date.UTC(2025, 0, 1) }
    expect(() => loop.schedule('s', spec, 'tick', { n: 1 })).toThrow(/a schedule with a due time after now/)
  })

  it('a jitter longer than the interval skips no due time', async () => {
    const { clock, loop, fires } = mk()
    loop.schedule('s', { every: 1000, jitterMs: 2500 }, 'tick', { n: 1 })
    await clock.advance(30_000)
    expect(fires.map((f) => (Date.parse(f) - T0) / 1000).slice(0, 6)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('a restore that brings a job key in use here replaces the waiting message, leaving one under the key', async () => {
    const clock = new VirtualClock()
    const a = createLoop<Msgs>({ clock, logger: false })
    const ran: number[] = []
    a.on('a', (m) => void ran.push(m.payload))
    a.postDelayed('a', 1, 5_000, { jobKey: 'k' })
    const b = createLoop<Msgs>({ clock, logger: false })
    b.on('a', () => {})
    b.postDelayed('a', 2, 5_000, { jobKey: 'k' })
    a.restore(JSON.parse(JSON.stringify(await b.stop({ deadlineMs: 0 }))))
    expect(a.jobs.get('k')).toMatchObject({ payload: 2 })
    expect(a.jobs.cancel('k')).toBe('cancelled')
    await clock.advance(10_000)
    expect(ran).toEqual([])
    expect(a.metrics().counters.cancelled).toBe(2)
  })
})
