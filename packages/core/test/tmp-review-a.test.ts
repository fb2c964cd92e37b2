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
  loop.on('a', () => {})
  loop.on('b', () => {})
  return { clock, loop, fires }
}

describe('review', () => {
  it('H31 posted = accepted + rejected with schedules', async () => {
    const { clock, loop } = setup()
    loop.schedule('s', { every: 1000 }, 'tick', { n: 1 })
    await clock.advance(5_500)
    const c = loop.metrics().counters
    console.log(c.posted, c.accepted, c.rejected)
    expect(c.posted).toBe(c.accepted + c.rejected)
  })

  it('H12 backfill exceeds limit across a restart', async () => {
    const epoch = Date.UTC(2026, 0, 1)
    const store = new MemoryStore('memory', () => Date.now())
    const boot = (at: number, s: MemoryStore) => {
      const clock = new VirtualClock(0, at)
      const loop = createLoop<Msgs>({ clock, store: s, logger: false })
      const runs: string[] = []
      loop.on('tick', (m) => {
        runs.push(m.headers['flowing-fire-at'] as string)
      })
      loop.schedule('s', { cron: '0 * * * *', limit: 2, missed: { backfill: 10 } }, 'tick', { n: 1 })
      loop.start()
      return { clock, loop, runs }
    }
    const first = boot(epoch + 30 * 60_000, store)
    const acked = first.loop.flushed()
    await first.clock.advance(0)
    await acked
    const second = boot(epoch + 5.5 * H, store.reopen())
    await second.clock.advance(10 * H)
    console.log(second.runs)
    expect(second.runs.length).toBeLessThanOrEqual(2)
  })

  it('H1 escalating a deadline stop cancels delayed messages instead of handing them back', async () => {
    const { clock, loop } = setup()
    loop.post('busy', 'x')
    loop.postDelayed('a', 1, 60_000)
    await clock.advance(1)
    const stopping = loop.stop({ deadlineMs: 30_000 })
    void loop.stop({ drain: false })
    await clock.advance(20_000)
    const snap = await stopping
    console.log(
      snap.messages.map((m) => m.state),
      loop.metrics().counters,
    )
    expect(snap.messages.map((m) => m.type)).toContain('a')
  })
})
