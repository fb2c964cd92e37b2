/**
 * Cron schedules on virtual time across a year, against croner's own next-run sequence, in zones with
 * DST: Europe/Berlin, America/New_York and Australia/Lord_Howe (a 30-minute shift). Each due time
 * fires once — spring forward and fall back included — and never early.
 */
import { Cron } from 'croner'
import { describe, expect, it } from 'vitest'
import { createLoop, VirtualClock } from '../src/index.js'

const YEAR = 365 * 24 * 3_600_000
const start = Date.UTC(2026, 0, 1)

function expected(cron: string, tz: string): number[] {
  const c = new Cron(cron, { timezone: tz, paused: true })
  const out: number[] = []
  for (let d = c.nextRun(new Date(start)); d !== null && d.getTime() <= start + YEAR; d = c.nextRun(d)) {
    out.push(d.getTime())
  }
  return out
}

describe('cron schedules across DST (virtual time, a year)', { timeout: 60_000 }, () => {
  for (const tz of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe']) {
    for (const cron of ['30 2 * * *', '0 * * * *', '15,45 1-3 * * *', '0 0 L * *', '0 9 * * 1#2']) {
      it(`${cron} in ${tz}`, async () => {
        const clock = new VirtualClock(0, start)
        const loop = createLoop<{ tick: null }>({ clock, logger: false })
        const fired: number[] = []
        const due: number[] = []
        loop.on('tick', (m) => {
          fired.push(clock.wallNow())
          due.push(Date.parse(m.headers['flowing-fire-at'] as string))
        })
        loop.schedule('s', { cron, tz }, 'tick', null)
        await clock.advance(YEAR)
        const want = expected(cron, tz)
        expect(due).toEqual(want)
        expect(fired).toEqual(want) // on time, never early
        expect(new Set(due).size).toBe(due.length) // once each
        await loop.stop()
      })
    }
  }

  it('a 02:30 Berlin job runs once on the spring-forward day (at 03:00) and once on the fall-back day', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 2, 28))
    const loop = createLoop<{ tick: null }>({ clock, logger: false })
    const fired: string[] = []
    loop.on('tick', () => {
      fired.push(new Date(clock.wallNow()).toISOString())
    })
    loop.schedule('s', { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 'tick', null)
    await clock.advance(Date.UTC(2026, 9, 26) - clock.wallNow())
    const days = ['2026-03-28', '2026-03-29', '2026-10-24', '2026-10-25']
    expect(fired.filter((at) => days.some((d) => at.startsWith(d)))).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, once
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 happens twice: the first one only
    ])
    await loop.stop()
  })
})
