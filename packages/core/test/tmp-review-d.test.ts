import { describe, expect, it } from 'vitest'
import { createLoop, isFlowingError, MemoryStore, VirtualClock } from '../src/index.js'

interface Msgs {
  tick: { n: number }
  busy: string
  a: number
  b: number
}
const H = 3_600_000

async function committed(loop: { flushed(): Promise<void> }, clock: VirtualClock) {
  const acked = loop.flushed()
  await clock.advance(0)
  await acked
}

describe('review d', () => {
  it('H16 remove() before start() of a journaled schedule', async () => {
    const epoch = Date.UTC(2026, 0, 1)
    const store = new MemoryStore('memory', () => Date.now())
    const c1 = new VirtualClock(0, epoch)
    const l1 = createLoop<Msgs>({ clock: c1, store, logger: false })
    l1.on('tick', () => {})
    l1.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    l1.start()
    await committed(l1, c1)
    const c2 = new VirtualClock(0, epoch + 60_000)
    const l2 = createLoop<Msgs>({ clock: c2, store: store.reopen(), logger: false })
    const runs: string[] = []
    l2.on('tick', (m) => {
      runs.push(m.headers['flowing-fire-at'] as string)
    })
    const removed = l2.schedules.remove('s')
    console.log('removed before start:', removed)
    l2.start()
    await c2.advance(3 * H)
    console.log(
      runs,
      l2.schedules.list().map((s) => s.id),
    )
    expect(removed === false || runs.length === 0).toBe(true)
  })

  it('H16b declare then remove before start: the journaled schedule comes back', async () => {
    const epoch = Date.UTC(2026, 0, 1)
    const store = new MemoryStore('memory', () => Date.now())
    const c1 = new VirtualClock(0, epoch)
    const l1 = createLoop<Msgs>({ clock: c1, store, logger: false })
    l1.on('tick', () => {})
    l1.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    l1.start()
    await committed(l1, c1)
    const c2 = new VirtualClock(0, epoch + 60_000)
    const l2 = createLoop<Msgs>({ clock: c2, store: store.reopen(), logger: false })
    const runs: string[] = []
    l2.on('tick', (m) => {
      runs.push(m.headers['flowing-fire-at'] as string)
    })
    l2.schedule('s', { cron: '0 * * * *' }, 'tick', { n: 1 })
    expect(l2.schedules.remove('s')).toBe(true)
    expect(l2.schedules.get('s')).toBeUndefined()
    l2.start()
    await c2.advance(3 * H)
    console.log(runs)
    expect(runs).toEqual([])
  })

  it('H1b stop({ drain: false, deadlineMs }) hands delayed messages back (the stop guide)', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<Msgs>({ clock, logger: false })
    loop.on('a', () => {})
    loop.postDelayed('a', 1, 60_000)
    const stopping = loop.stop({ drain: false, deadlineMs: 1_000 })
    await clock.advance(1_000)
    const snap = await stopping
    console.log(snap.messages, loop.metrics().counters.cancelled)
    expect(snap.messages.map((m) => [m.type, m.state])).toEqual([['a', 'delayed']])
  })

  it('H2 escalating a draining stop of a journaled loop cancels its delayed messages (the journal loses them)', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 0, 1))
    const store = new MemoryStore('memory', () => clock.wallNow())
    const loop = createLoop<Msgs>({ clock, store, logger: false })
    loop.on('busy', () => clock.sleep(10_000))
    loop.on('a', () => {})
    loop.start()
    loop.post('busy', 'x')
    loop.postDelayed('a', 1, 60 * 60_000)
    await committed(loop, clock)
    const s1 = loop.stop()
    const s2 = loop.stop({ drain: false })
    await clock.advance(20_000)
    await s1
    await s2
    const c2 = new VirtualClock(0, clock.wallNow())
    const again = createLoop<Msgs>({ clock: c2, store: store.reopen(), logger: false })
    const ran: number[] = []
    again.on('busy', () => {})
    again.on('a', (m) => {
      ran.push(m.payload)
    })
    again.start()
    await c2.advance(2 * H)
    console.log(loop.metrics().counters.cancelled, ran)
    expect(ran).toEqual([1])
  })

  it('H-stopped: a stopped loop keeps retrying a refused next fire every second', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 0, 1))
    const loop = createLoop<Msgs>({ clock, logger: false, workers: 1, capacity: 1, overflow: 'reject', maxDelayed: 2 })
    loop.on('tick', () => {})
    loop.on('busy', () => clock.sleep(5_000))
    loop.on('a', () => {})
    const refused: string[] = []
    loop.events.on('schedule-refused', (id, e) => refused.push((e as Error).name))
    loop.post('busy', 'x')
    await clock.advance(0)
    loop.post('busy', 'y')
    loop.schedule('s', { every: 1000 }, 'tick', { n: 1 })
    loop.postDelayed('a', 1, 100_000)
    await clock.advance(2_500)
    expect(refused.length).toBeGreaterThan(0)
    const stopped = loop.stop({ drain: false })
    await clock.advance(10_000)
    await stopped
    expect(loop.state).toBe('stopped')
    const before = refused.length
    await clock.advance(60_000)
    console.log(refused.slice(before, before + 3), refused.length - before, loop.metrics().counters.rejected)
    expect(refused.length - before).toBe(0)
  })

  it('H-restore-jobkey: a restore that brings a job key this loop uses leaves two messages under one key', async () => {
    const clock = new VirtualClock()
    const a = createLoop<Msgs>({ clock, logger: false })
    const ran: number[] = []
    a.on('a', (m) => {
      ran.push(m.payload)
    })
    a.postDelayed('a', 1, 5_000, { jobKey: 'k' })
    const b = createLoop<Msgs>({ clock, logger: false })
    b.on('a', () => {})
    b.postDelayed('a', 2, 5_000, { jobKey: 'k' })
    const snap = JSON.parse(JSON.stringify(await b.stop({ deadlineMs: 0 })))
    a.restore(snap)
    expect(a.jobs.cancel('k')).toBe('cancelled')
    await clock.advance(10_000)
    console.log(ran)
    expect(ran).toEqual([])
  })
})
