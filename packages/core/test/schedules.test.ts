import { describe, expect, it } from 'vitest'
import { createLoop, InvalidArgumentError, MemoryStore, UnknownMessageTypeError, VirtualClock } from '../src/index.js'

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
    await clock.advance(10_000)
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
