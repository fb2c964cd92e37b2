import { describe, expect, it } from 'vitest'
import { createLoop, isFlowingError, MemoryStore, VirtualClock } from '../src/index.js'

interface Msgs {
  tick: { n: number }
  busy: string
  a: number
  b: number
}
const H = 3_600_000

function setup(epoch = Date.UTC(2026, 0, 1), opts: object = {}) {
  const clock = new VirtualClock(0, epoch)
  const loop = createLoop<Msgs>({ clock, logger: false, ...opts })
  const fires: string[] = []
  loop.on('tick', (m) => {
    fires.push(m.headers['flowing-fire-at'] as string)
  })
  loop.on('busy', () => clock.sleep(10_000))
  return { clock, loop, fires }
}

describe('review b', () => {
  it('H3 a follow-up with preserve_run_at keeps its origin (hops, trace)', async () => {
    const { clock, loop } = setup()
    const seen: { hops: number; trace: string }[] = []
    let parentTrace = ''
    loop.on('a', (m, ctx) => {
      parentTrace = m.traceId
      ctx.post('b', 2, { jobKey: 'k', jobKeyMode: 'preserve_run_at' })
    })
    loop.on('b', (m) => {
      seen.push({ hops: m.hops, trace: m.traceId })
    })
    loop.postDelayed('b', 1, 1000, { jobKey: 'k' })
    loop.post('a', 1)
    await clock.advance(2000)
    console.log(seen, parentTrace)
    expect(seen).toEqual([{ hops: 1, trace: parentTrace }])
  })

  it('H4 restore of a snapshot holding a queued fire and its next carrier', async () => {
    const { clock, loop, fires } = setup()
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 }, { key: 'k' })
    loop.post('busy', 'x', { key: 'k' } as never) // busy key
    await clock.advance(60_001) // the fire is due, waits behind the busy key
    const snapshot = JSON.parse(JSON.stringify(await loop.stop({ deadlineMs: 0 })))
    console.log(snapshot.messages.map((m: any) => [m.type, m.state, m.schedule?.nominalEpochMs, m.schedule?.runs]))
    const next = createLoop<Msgs>({ clock, logger: false })
    const more: string[] = []
    next.on('tick', (m) => {
      more.push(m.headers['flowing-fire-at'] as string)
    })
    next.on('busy', () => {})
    next.restore(snapshot)
    await clock.advance(3 * 60_000)
    console.log(more, next.metrics().counters)
    expect(new Set(more).size).toBe(more.length)
    expect(more.length).toBe(4)
  })

  it('H5 restore binds a job key to the message that took it over', async () => {
    const { clock, loop } = setup()
    loop.on('a', () => new Promise(() => {}))
    loop.on('b', () => {})
    loop.post('a', 1, { jobKey: 'k' })
    await clock.advance(1)
    loop.postDelayed('a', 2, 60_000, { jobKey: 'k' }) // takes the key over
    expect(loop.jobs.get('k')).toMatchObject({ payload: 2 })
    const stopping = loop.stop({ deadlineMs: 0 })
    await clock.advance(1)
    const snapshot = JSON.parse(JSON.stringify(await stopping))
    console.log(snapshot.messages.map((m: any) => [m.payload, m.state, m.job]))
    const next = createLoop<Msgs>({ clock, logger: false })
    next.on('a', () => {})
    next.pause()
    next.restore(snapshot)
    expect(next.jobs.get('k')).toMatchObject({ payload: 2 })
  })

  it('H6 an upsert of the same definition leaves a paused schedule paused', async () => {
    const { clock, loop, fires } = setup()
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    loop.schedules.pause('s')
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    await clock.advance(5 * 60_000)
    expect(loop.schedules.get('s')?.paused).toBe(true)
    expect(fires).toEqual([])
  })

  it('H7 jitter larger than the interval skips due times', async () => {
    const { clock, loop, fires } = setup()
    loop.schedule('s', { every: 1000, jitterMs: 2500 }, 'tick', { n: 1 })
    await clock.advance(30_000)
    const due = fires.map((f) => Date.parse(f) - Date.UTC(2026, 0, 1))
    console.log(due)
    expect(due.slice(0, 10)).toEqual([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000])
  })

  it('H9 upsert of a schedule with no fire left returns undefined', () => {
    const { loop } = setup()
    const info = loop.schedule(
      's',
      { every: 1000, endAt: Date.UTC(2025, 0, 1), startAt: Date.UTC(2024, 0, 1) },
      'tick',
      { n: 1 },
    )
    console.log(info)
    expect(info).toBeDefined()
  })

  it('H8 hostile spec: a throwing getter', () => {
    const { loop } = setup()
    const spec = {
      get cron() {
        throw new Error('boom')
      },
    }
    let e: unknown
    try {
      loop.schedule('s', spec as never, 'tick', { n: 1 })
    } catch (x) {
      e = x
    }
    console.log(String(e))
    expect(isFlowingError(e)).toBe(true)
  })

  it('H8b hostile spec: a Proxy of a Date for startAt', () => {
    const { loop } = setup()
    let e: unknown
    try {
      loop.schedule('s', { every: 1000, startAt: new Proxy(new Date(), {}) }, 'tick', { n: 1 })
    } catch (x) {
      e = x
    }
    console.log(String(e))
    expect(e === undefined || isFlowingError(e)).toBe(true)
  })

  it('H8c hostile spec: missed with throwing getter', () => {
    const { loop } = setup()
    let e: unknown
    try {
      loop.schedule(
        's',
        {
          every: 1000,
          missed: {
            get backfill() {
              throw new Error('x')
            },
          },
        } as never,
        'tick',
        { n: 1 },
      )
    } catch (x) {
      e = x
    }
    console.log(String(e))
    expect(isFlowingError(e)).toBe(true)
  })

  it('H8d hostile options: Proxy throwing on ownKeys', () => {
    const { loop } = setup()
    let e: unknown
    try {
      loop.schedule(
        's',
        { every: 1000 },
        'tick',
        { n: 1 },
        new Proxy(
          {},
          {
            ownKeys() {
              throw new Error('x')
            },
          },
        ),
      )
    } catch (x) {
      e = x
    }
    console.log(String(e))
    expect(isFlowingError(e)).toBe(true)
  })

  it('H8e hostile id and spec types', () => {
    const { loop } = setup()
    for (const [id, spec] of [
      [Symbol('x'), { every: 1 }],
      ['s', { every: 10n }],
      ['s', { cron: 5 }],
      ['s', { every: 10, startAt: new Date(NaN) }],
      ['s', { cron: '* * * * *', tz: {} }],
      ['s', { every: 10, limit: 1.5 }],
      ['s', { every: 10, jitterMs: -1 }],
      ['s', null],
      ['s', 'x'],
      ['s', { every: 10, missed: { backfill: 1, x: 1 } }],
      ['s', { every: 10, missed: [] }],
    ] as const) {
      let e: unknown
      try {
        loop.schedule(id as never, spec as never, 'tick', { n: 1 })
      } catch (x) {
        e = x
      }
      if (!isFlowingError(e)) console.log('not flowing', id, spec, e)
      expect(isFlowingError(e)).toBe(true)
    }
  })
})
