import { afterEach, expect, it, vi } from 'vitest'
import { VirtualClock } from '../src/index.js'
import { createNatsLoop, type NatsLoop } from '../../nats/src/index.js'
import { describeNats, useNatsServer } from '../../nats/test/server.js'
import { until } from '../../nats/test/until.js'
import { drive, driveUntil } from '../../nats/test/virtual-time.js'

interface Messages { parent: { v: number }; child: { v: number }; tick: { n: number } }
const EPOCH = 1_000_000_000

describeNats('review nats', () => {
  const server = useNatsServer()
  const open: { loop: NatsLoop<Messages>; clock?: VirtualClock }[] = []
  let names = 0
  afterEach(async () => {
    vi.restoreAllMocks()
    await Promise.all(open.splice(0).map(({ loop, clock }) => (clock ? drive(clock, loop.stop({ deadlineMs: 0 })) : loop.stop({ deadlineMs: 0 }))))
  })
  const make = async (o: object = {}, clock?: VirtualClock) => {
    const loop = await createNatsLoop<Messages>({ servers: server().url, name: `rv${names++}`, partitions: 2, loop: { logger: false }, ...(clock ? { clock } : {}), ...o })
    open.push({ loop, clock })
    return loop
  }

  it('N1 a follow-up of a message posted with a jobKey runs', async () => {
    const loop = await make()
    const children: number[] = []
    loop.on('parent', (m, ctx) => { ctx.post('child', { v: m.payload.v }) })
    loop.on('child', (m) => { children.push(m.payload.v) })
    await loop.start()
    await loop.post('parent', { v: 1 }, { jobKey: 'p1' })
    await loop.post('parent', { v: 2 })
    await until(() => children.length >= 1, 10_000, 'a child runs')
    await new Promise((r) => setTimeout(r, 1_500))
    console.log('N1', children, loop.metrics().jobsSkipped)
    expect(children.sort()).toEqual([1, 2])
  }, 30_000)

  it('N2 a dead-lettered keyed message frees its key', async () => {
    const loop = await make()
    let calls = 0
    loop.on('parent', () => { calls++; throw new Error('always') }, { retry: { maxAttempts: 1 } } as never)
    await loop.start()
    await loop.post('parent', { v: 1 }, { jobKey: 'k' })
    await until(() => calls >= 1, 10_000, 'it ran')
    await new Promise((r) => setTimeout(r, 1_000))
    const info = await loop.jobs.get('k')
    const cancelled = await loop.jobs.cancel('k')
    console.log('N2', calls, info, cancelled, loop.metrics())
    expect(info).toBeUndefined()
    expect(cancelled).toBe('unknown')
  }, 30_000)

  it('N3 an upsert whose carrier is refused writes nothing, and a later upsert fires', async () => {
    const loop = await make({ maxDelayed: 1 })
    const fires: string[] = []
    loop.on('tick', (m) => { fires.push(m.headers['flowing-fire-at'] as string) })
    loop.on('parent', () => {})
    await loop.postDelayed('parent', { v: 1 }, 1_500) // the delayed stream is full
    let error: unknown
    try { await loop.schedules.upsert('s', { every: 500 }, 'tick', { n: 1 }) } catch (e) { error = e }
    console.log('N3 refused:', String(error), await loop.schedules.get('s'))
    await loop.start()
    await new Promise((r) => setTimeout(r, 2_500)) // the delayed message moved: room again
    await loop.schedules.upsert('s', { every: 500 }, 'tick', { n: 1 })
    await new Promise((r) => setTimeout(r, 3_000))
    console.log('N3 fires', fires.length)
    expect(error).toBeDefined()
    expect(fires.length).toBeGreaterThan(2)
  }, 30_000)

  it('N4 a jitter over a minute makes a punctual fire count as missed: skip drops it', async () => {
    const clock = new VirtualClock(0, EPOCH)
    const loop = await make({}, clock)
    const fires: string[] = []
    loop.on('tick', (m) => { fires.push(m.headers['flowing-fire-at'] as string) })
    vi.spyOn(Math, 'random').mockReturnValue(0.9)
    await loop.schedules.upsert('s', { every: 600_000, jitterMs: 100_000, missed: 'skip' }, 'tick', { n: 1 })
    const nominal = EPOCH + 600_000
    await clock.advance(600_000 + 90_000 - 5) // 5 ms before the fire's jittered due time
    await loop.start()
    await driveUntil(clock, () => fires.length > 0 || clock.now() > 600_000 + 90_000 + 3_000, { stepMs: 1 })
    console.log('N4', fires, await loop.schedules.get('s'))
    expect(fires).toEqual([new Date(nominal).toISOString()])
  }, 60_000)

  it('N5 upsert of the same definition leaves a paused schedule paused', async () => {
    const loop = await make()
    await loop.schedules.upsert('s', { every: 60_000 }, 'tick', { n: 1 })
    await loop.schedules.pause('s')
    await loop.schedules.upsert('s', { every: 60_000 }, 'tick', { n: 1 })
    const info = await loop.schedules.get('s')
    console.log('N5', info)
    expect(info?.paused).toBe(true)
  }, 30_000)

  it('N6 missed backfill keeps to the limit', async () => {
    const clock = new VirtualClock(0, EPOCH)
    const loop = await make({}, clock)
    const fires: string[] = []
    loop.on('tick', (m) => { fires.push(m.headers['flowing-fire-at'] as string) })
    await loop.schedules.upsert('s', { every: 10_000, limit: 2, missed: { backfill: 10 } }, 'tick', { n: 1 })
    await clock.advance(200_000) // no process ran
    await loop.start()
    await driveUntil(clock, () => fires.length >= 2, { stepMs: 10 })
    await drive(clock, new Promise((r) => setTimeout(r, 1_000)), { stepMs: 5 })
    console.log('N6', fires.length, await loop.schedules.get('s'))
    expect(fires.length).toBeLessThanOrEqual(2)
  }, 60_000)
})
