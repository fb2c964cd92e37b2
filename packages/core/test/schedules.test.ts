import { describe, expect, it } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  LoopStoppedError,
  MemoryStore,
  UnknownMessageTypeError,
  VirtualClock,
} from '../src/index.js'
import { FlakyStore } from './fixtures.js'

interface Msgs {
  tick: { n: number }
}

const H = 3_600_000
const D = 24 * H

function setup(epoch = Date.UTC(2026, 0, 1)) {
  const clock = new VirtualClock(0, epoch)
  const loop = createLoop<Msgs>({ clock, logger: false })
  const fires: { at: string; fireAt: string | undefined }[] = []
  loop.on('tick', (m) => {
    fires.push({ at: new Date(clock.wallNow()).toISOString(), fireAt: m.headers['flowing-fire-at'] })
  })
  return { clock, loop, fires }
}

describe('schedules', () => {
  it('fires a cron schedule at each due time, in its time zone', async () => {
    const { clock, loop, fires } = setup()
    const info = loop.schedule('daily', { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 'tick', { n: 1 })
    expect(info.nextAt).toBe(Date.UTC(2026, 0, 1, 1, 30))
    await clock.advance(3 * D)
    expect(fires.map((f) => f.at)).toEqual([
      '2026-01-01T01:30:00.000Z',
      '2026-01-02T01:30:00.000Z',
      '2026-01-03T01:30:00.000Z',
    ])
    expect(fires[0]?.fireAt).toBe('2026-01-01T01:30:00.000Z')
    expect(loop.schedules.get('daily')).toMatchObject({ runs: 3, nextAt: Date.UTC(2026, 0, 4, 1, 30) })
  })

  it('fires every interval, up to its limit', async () => {
    const { clock, loop, fires } = setup()
    loop.schedule('often', { every: 1000, limit: 3 }, 'tick', { n: 1 })
    await clock.advance(2_500)
    expect(loop.schedules.list().map((s) => s.runs)).toEqual([2])
    await clock.advance(7_500)
    expect(loop.schedules.list()).toEqual([])
    const { posted, accepted, rejected, succeeded } = loop.metrics().counters
    expect([posted, accepted, rejected, succeeded]).toEqual([3, 3, 0, 3]) // each fire is a post
    expect(fires.length).toBe(3)
    expect(loop.schedules.get('often')).toBeUndefined()
  })

  it('refuses bad input with typed errors, nothing registered', () => {
    const { loop } = setup()
    const bad: [unknown, RegExp][] = [
      [{ cron: '61 * * * *' }, /spec\.cron/],
      [{ cron: '* * * * *', tz: 'Mars/Base' }, /spec\.tz/],
      [{ every: 0 }, /spec\.every/],
      [{ every: Number.NaN }, /spec\.every/],
      [{ every: 10, startAt: 100, endAt: 50 }, /spec\.endAt/],
      [{ every: 10, missed: 'once' }, /spec\.missed/],
      [{}, /one of `cron` and `every`/],
      [{ cron: '* * * * *', every: 5 }, /exactly one/],
      [{ every: 10, evry: 5 }, /spec\.evry/],
    ]
    for (const [spec, message] of bad) {
      expect(() => loop.schedule('x', spec as never, 'tick', { n: 1 })).toThrow(InvalidArgumentError)
      expect(() => loop.schedule('x', spec as never, 'tick', { n: 1 })).toThrow(message)
    }
    expect(() => loop.schedule('x', { every: 10 }, 'nope' as never, { n: 1 } as never)).toThrow(UnknownMessageTypeError)
    expect(() => loop.schedule('', { every: 10 }, 'tick', { n: 1 })).toThrow(/`id`/)
    expect(() => loop.schedule('x', { every: 10 }, 'tick', { n: 1 }, { prio: 1 } as never)).toThrow(/options\.prio/)
    expect(loop.schedules.list()).toEqual([])
    expect(loop.metrics().counters.posted).toBe(0)
  })

  it('survives a kill -9 with a journal: the fire due while down runs once', async () => {
    const epoch = Date.UTC(2026, 0, 1)
    const clock = new VirtualClock(0, epoch)
    const store = new MemoryStore('memory', () => clock.wallNow())
    const first = createLoop<Msgs>({ clock, store, logger: false })
    const runs: string[] = []
    first.on('tick', (m) => {
      runs.push(m.headers['flowing-fire-at'] as string)
    })
    first.schedule('hourly', { cron: '0 * * * *' }, 'tick', { n: 1 })
    first.start()
    const acked = first.flushed()
    await clock.advance(0)
    await acked
    await clock.advance(H + 1) // one fire
    const acked2 = first.flushed()
    await clock.advance(0)
    await acked2
    expect(runs).toEqual(['2026-01-01T01:00:00.000Z'])
    // kill -9 for 5 h
    const later = new VirtualClock(0, clock.wallNow() + 5 * H)
    const second = createLoop<Msgs>({ clock: later, store: store.reopen(), logger: false })
    second.on('tick', (m) => {
      runs.push(m.headers['flowing-fire-at'] as string)
    })
    second.schedule('hourly', { cron: '0 * * * *' }, 'tick', { n: 1 })
    second.start()
    await later.advance(H)
    expect(runs).toEqual(['2026-01-01T01:00:00.000Z', '2026-01-01T06:00:00.000Z', '2026-01-01T07:00:00.000Z'])
  })
})

// A journaled loop on `store`, its fires recorded by due time; `at` the wall time its clock starts at.
function journaled(store: MemoryStore, at: number, define: (loop: ReturnType<typeof createLoop<Msgs>>) => void) {
  const clock = new VirtualClock(0, at)
  const loop = createLoop<Msgs>({ clock, store, logger: false })
  const runs: string[] = []
  loop.on('tick', (m) => {
    runs.push((m.headers['flowing-fire-at'] as string).slice(11, 16))
  })
  define(loop)
  loop.start()
  return { clock, loop, runs }
}

async function committed(loop: { flushed(): Promise<void> }, clock: VirtualClock) {
  const acked = loop.flushed()
  await clock.advance(0)
  await acked
}

describe('schedules across restarts (the journal)', () => {
  const epoch = Date.UTC(2026, 0, 1)
  for (const [missed, expected] of [
    ['skip', ['04:00']],
    ['run-once', ['03:00', '04:00']],
    [{ backfill: 2 }, ['02:00', '03:00', '04:00']],
    [{ backfill: 10 }, ['01:00', '02:00', '03:00', '04:00']],
  ] as const) {
    it(`applies missed: ${JSON.stringify(missed)} to the fires due while no process ran`, async () => {
      const store = new MemoryStore('memory', () => Date.now())
      const define = (loop: ReturnType<typeof createLoop<Msgs>>) =>
        loop.schedule('hourly', { cron: '0 * * * *', missed }, 'tick', { n: 1 })
      const first = journaled(store, epoch + 30 * 60_000, define) // 00:30: next fire 01:00
      await committed(first.loop, first.clock)
      expect(first.runs).toEqual([])
      // Down from 00:30 to 03:30: the fires of 01:00, 02:00 and 03:00 are missed.
      const second = journaled(store.reopen(), epoch + 3.5 * H, define)
      await second.clock.advance(H)
      expect(second.runs).toEqual(expected)
      expect(second.loop.schedules.get('hourly')).toMatchObject({ nextAt: epoch + 5 * H })
    })
  }

  it('keeps its place across a restart without an upsert, and a same upsert changes nothing', async () => {
    const store = new MemoryStore('memory', () => Date.now())
    const first = journaled(store, epoch, (loop) => loop.schedule('s', { every: 10 * 60_000 }, 'tick', { n: 1 }))
    await first.clock.advance(25 * 60_000) // fires at 00:10 and 00:20
    await committed(first.loop, first.clock)
    expect(first.runs).toEqual(['00:10', '00:20'])
    const second = journaled(store.reopen(), epoch + 26 * 60_000, () => {})
    expect(second.loop.schedules.get('s')).toMatchObject({ runs: 2, nextAt: epoch + 30 * 60_000 })
    expect(second.loop.schedule('s', { every: 10 * 60_000 }, 'tick', { n: 1 })).toMatchObject({ runs: 2 })
    await second.clock.advance(15 * 60_000)
    expect(second.runs).toEqual(['00:30', '00:40'])
    expect(second.loop.metrics().counters.cancelled).toBe(0)
  })

  it('a fire that entered the queue before a kill -9 runs once after the restart, not twice', async () => {
    const store = new MemoryStore('memory', () => Date.now())
    const define = (loop: ReturnType<typeof createLoop<Msgs>>) =>
      loop.schedule('s', { cron: '0 1 * * *' }, 'tick', { n: 1 })
    const first = journaled(store, epoch, define)
    first.loop.pause() // the 01:00 fire enters the queue but does not start
    await first.clock.advance(H)
    await committed(first.loop, first.clock)
    expect(first.runs).toEqual([])
    const second = journaled(store.reopen(), epoch + H + 1000, define)
    await second.clock.advance(2 * 24 * H)
    expect(second.runs).toEqual(['01:00', '01:00', '01:00']) // 1 Jan (recovered, once), 2 Jan, 3 Jan
    expect(second.loop.metrics().counters.duplicates).toBe(0)
  })

  it('pause survives a restart; resume fires from now; remove ends it', async () => {
    const store = new MemoryStore('memory', () => Date.now())
    const first = journaled(store, epoch, (loop) => loop.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 }))
    expect(first.loop.schedules.pause('s')).toBe(true)
    await first.clock.advance(3 * H)
    await committed(first.loop, first.clock)
    expect(first.runs).toEqual([])
    const second = journaled(store.reopen(), epoch + 3 * H + 60_000, () => {})
    expect(second.loop.schedules.get('s')).toMatchObject({ paused: true, nextAt: undefined })
    await second.clock.advance(2 * H)
    expect(second.runs).toEqual([])
    expect(second.loop.schedules.resume('s')).toBe(true)
    await second.clock.advance(2 * H)
    expect(second.runs).toEqual(['06:00', '07:00'])
    expect(second.loop.schedules.remove('s')).toBe(true)
    expect(second.loop.schedules.remove('s')).toBe(false)
    await second.clock.advance(5 * H)
    expect(second.runs).toEqual(['06:00', '07:00'])
    expect(second.loop.schedules.list()).toEqual([])
  })
})

describe('schedules in one process', () => {
  it('an upsert that changes the spec replaces the next fire, with no duplicate', async () => {
    const { clock, loop, fires } = setup()
    loop.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    await clock.advance(H + 1)
    loop.schedule('s', { cron: '30 * * * *' }, 'tick', { n: 2 })
    expect(loop.schedules.list()).toHaveLength(1)
    await clock.advance(2 * H)
    expect(fires.map((f) => f.fireAt?.slice(11, 16))).toEqual(['01:00', '01:30', '02:30'])
  })

  it('every with startAt and endAt; jitter never fires early, nor later than jitterMs', async () => {
    const { clock, loop, fires } = setup()
    const start = Date.UTC(2026, 0, 1, 0, 0, 5)
    loop.schedule('s', { every: 1000, startAt: new Date(start), endAt: start + 5000, jitterMs: 300 }, 'tick', { n: 1 })
    await clock.advance(20_000)
    expect(fires.map((f) => f.fireAt)).toEqual([0, 1, 2, 3, 4].map((k) => new Date(start + k * 1000).toISOString()))
    for (const f of fires) {
      const late = Date.parse(f.at) - Date.parse(f.fireAt as string)
      expect(late).toBeGreaterThanOrEqual(0)
      expect(late).toBeLessThanOrEqual(300)
    }
    expect(loop.schedules.get('s')).toBeUndefined()
  })

  it('a failing fire retries as any message, and the schedule goes on', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 0, 1))
    const loop = createLoop<Msgs>({ clock, logger: false, retry: { maxAttempts: 2, baseMs: 10, jitter: 0 } })
    let calls = 0
    loop.on('tick', () => {
      calls++
      if (calls === 1) throw new Error('flaky')
    })
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 }, { priority: 1 })
    await clock.advance(3 * 60_000)
    expect(calls).toBe(4) // fire 1 (twice), 2, 3
    expect(loop.metrics().counters).toMatchObject({ succeeded: 3, deadLettered: 0 })
  })

  it('a snapshot keeps the schedules: restore continues them', async () => {
    const { clock, loop, fires } = setup()
    loop.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    await clock.advance(H + 1)
    const snapshot = JSON.parse(JSON.stringify(await loop.stop({ deadlineMs: 0 })))
    const next = createLoop<Msgs>({ clock, logger: false })
    const more: string[] = []
    next.on('tick', (m) => {
      more.push(m.headers['flowing-fire-at'] as string)
    })
    next.restore(snapshot)
    expect(next.schedules.get('s')).toMatchObject({ runs: 1 })
    await clock.advance(2 * H)
    expect(fires.length).toBe(1)
    expect(more.map((at) => at.slice(11, 16))).toEqual(['02:00', '03:00'])
  })
})

describe('schedules under hostile conditions', () => {
  it('refuses upserts, pauses and removals once a stop began, and registers nothing', async () => {
    const { loop } = setup()
    loop.schedule('s', { every: 1000 }, 'tick', { n: 1 })
    const stopping = loop.stop()
    expect(() => loop.schedule('t', { every: 1000 }, 'tick', { n: 1 })).toThrow(LoopStoppedError)
    expect(() => loop.schedules.remove('s')).toThrow(/Cannot remove a schedule: the loop is draining/)
    await stopping
    expect(() => loop.schedule('t', { every: 1000 }, 'tick', { n: 1 })).toThrow(/stopped/)
    expect(loop.schedules.get('t')).toBeUndefined()
  })

  it('a next fire the journal refuses is reported and tried again, and the schedule goes on', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 0, 1))
    const store = new FlakyStore('flaky', () => clock.wallNow())
    const loop = createLoop<Msgs>({ clock, store, logger: false })
    const fired: string[] = []
    loop.on('tick', (m) => {
      fired.push(m.headers['flowing-fire-at'] as string)
    })
    const refused: string[] = []
    loop.events.on('schedule-refused', (id, error) => refused.push(`${id}: ${(error as Error).name}`))
    loop.events.on('store-error', () => {})
    loop.start()
    loop.schedule('s', { every: 1000 }, 'tick', { n: 1 })
    await clock.advance(0)
    store.failing = true
    loop.post('tick', { n: 0 }) // a commit fails: the journal refuses posts until one succeeds
    await clock.advance(1000) // the fire comes due; its successor is refused
    expect(refused[0]).toBe('s: StoreError')
    store.failing = false
    await clock.advance(10_000)
    expect(loop.schedules.get('s')?.nextAt).toBeGreaterThan(clock.wallNow())
    expect(fired.length).toBeGreaterThanOrEqual(8)
    expect(new Set(fired).size).toBe(fired.length)
  })

  it('a restore that brings a schedule this loop holds too leaves one chain, not two', async () => {
    const { clock, loop } = setup()
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    const other = setup()
    other.loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    const snapshot = JSON.parse(JSON.stringify(await other.loop.stop({ deadlineMs: 0 })))
    loop.restore(snapshot)
    const fired: string[] = []
    loop.on(
      'tick',
      (m) => {
        fired.push(m.headers['flowing-fire-at'] as string)
      },
      { replace: true },
    )
    await clock.advance(5 * 60_000)
    expect(new Set(fired).size).toBe(fired.length) // no due time twice
    expect(fired.length).toBe(5)
    expect(loop.metrics().gauges.delayed).toBe(1) // one next fire
  })
})
