import { describe, expect, it } from 'vitest'
import { createLoop, isFlowingError, MemoryStore, VirtualClock } from '../src/index.js'

interface Msgs {
  tick: { n: number }
  busy: string
  a: number
  b: number
}
const H = 3_600_000

describe('review c', () => {
  it('H4 restore of a snapshot holding a queued fire and its next carrier', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 0, 1))
    const loop = createLoop<Msgs>({ clock, logger: false })
    loop.on('tick', () => {})
    loop.schedule('s', { every: 60_000 }, 'tick', { n: 1 })
    loop.pause()
    await clock.advance(60_001) // the fire is queued
    const snapshot = JSON.parse(JSON.stringify(await loop.stop({ deadlineMs: 0 })))
    console.log(snapshot.messages.map((m: any) => [m.type, m.state, m.schedule?.nominalEpochMs, m.schedule?.runs]))
    const next = createLoop<Msgs>({ clock, logger: false })
    const more: string[] = []
    next.on('tick', (m) => {
      more.push(m.headers['flowing-fire-at'] as string)
    })
    next.restore(snapshot)
    await clock.advance(3 * 60_000)
    console.log(more, next.metrics().counters)
    expect(new Set(more).size).toBe(more.length)
    expect(more.length).toBe(4)
  })

  it('H-lost a next fire retried while a draining stop runs is left on the wheel with no outcome', async () => {
    const clock = new VirtualClock(0, Date.UTC(2026, 0, 1))
    const loop = createLoop<Msgs>({ clock, logger: false, workers: 1, capacity: 1, overflow: 'reject', maxDelayed: 2 })
    const fires: string[] = []
    loop.on('tick', (m) => {
      fires.push(m.headers['flowing-fire-at'] as string)
    })
    loop.on('busy', () => clock.sleep(5_000))
    loop.on('a', () => {})
    const refused: string[] = []
    loop.events.on('schedule-refused', (id, e) => refused.push(`${id} ${(e as Error).name}`))
    loop.post('busy', 'x')
    await clock.advance(0)
    loop.post('busy', 'y') // the queue is full
    loop.schedule('s', { every: 1000 }, 'tick', { n: 1 })
    loop.postDelayed('a', 1, 100_000)
    await clock.advance(2_500)
    console.log('refused', refused, loop.metrics().gauges.delayed, loop.metrics().gauges.overdue)
    const stopped = loop.stop()
    await clock.advance(30_000)
    await stopped
    const m = loop.metrics()
    console.log(loop.state, m.counters, m.gauges.delayed, fires)
    const c = m.counters
    const ended = c.succeeded + c.deadLettered + c.cancelled + c.dropped + c.snapshotted + c.requestFailed
    expect(m.gauges.delayed).toBe(0)
    expect(ended).toBe(c.accepted)
  })
})
