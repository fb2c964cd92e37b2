import { describe, expect, it } from 'vitest'
import { createLoop, MemoryStore, VirtualClock } from '../src/index.js'

interface Msgs {
  tick: { n: number }
}
const H = 3_600_000

function run(epoch: number, spec: any, ms: number) {
  const clock = new VirtualClock(0, epoch)
  const loop = createLoop<Msgs>({ clock, logger: false })
  const fires: string[] = []
  loop.on('tick', (m) => {
    fires.push(`${m.headers['flowing-fire-at']}@${new Date(clock.wallNow()).toISOString()}`)
  })
  loop.schedule('s', spec, 'tick', { n: 1 })
  return clock.advance(ms).then(() => fires)
}

describe('dst', () => {
  it('fall back Berlin daily 02:30', async () => {
    const f = await run(Date.UTC(2026, 9, 24), { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 3 * 24 * H)
    console.log(f)
  })
  it('fall back Berlin hourly :30', async () => {
    const f = await run(Date.UTC(2026, 9, 24, 22), { cron: '30 * * * *', tz: 'Europe/Berlin' }, 6 * H)
    console.log(f)
  })
  it('fall back Berlin every 15 min in 2h', async () => {
    const f = await run(Date.UTC(2026, 9, 24, 23, 50), { cron: '*/15 2 * * *', tz: 'Europe/Berlin' }, 4 * H)
    console.log(f)
  })
  it('spring Berlin every 15 in 2h', async () => {
    const f = await run(Date.UTC(2026, 2, 28, 23), { cron: '*/15 2 * * *', tz: 'Europe/Berlin' }, 4 * H)
    console.log(f)
  })
  it('spring NY 02:30 and 02:00', async () => {
    console.log(await run(Date.UTC(2026, 2, 7), { cron: '30 2 * * *', tz: 'America/New_York' }, 3 * 24 * H))
    console.log(await run(Date.UTC(2026, 2, 7), { cron: '0 2 * * *', tz: 'America/New_York' }, 3 * 24 * H))
  })
  it('Lord Howe', async () => {
    // LHST: spring forward first Sunday of October 2026 (Oct 4) 02:00 -> 02:30; fall back Apr 5 2026 02:00 -> 01:30
    console.log(await run(Date.UTC(2026, 9, 2), { cron: '15 2 * * *', tz: 'Australia/Lord_Howe' }, 4 * 24 * H))
    console.log(await run(Date.UTC(2026, 3, 3), { cron: '45 1 * * *', tz: 'Australia/Lord_Howe' }, 4 * 24 * H))
  })
})
