import { describe, expect, it } from 'vitest'
import { createLoop, type LoopSnapshot, VirtualClock } from '../src/index.js'

interface Messages {
  job: number
}

const EPOCH = Date.UTC(2030, 5, 1) // far from the real wall clock: a Date.now() reading would show

describe('snapshots on the loop clock', () => {
  it('stamps a stop snapshot with the wall time of the loop clock, not the machine’s', async () => {
    const clock = new VirtualClock(0, EPOCH)
    const loop = createLoop<Messages>({ clock })
    loop.on('job', () => {})
    loop.postDelayed('job', 1, 1_000)
    await clock.advance(250)
    const snapshot = await loop.stop({ deadlineMs: 0 })
    expect(snapshot.takenAt).toBe(EPOCH + 250)
    expect(snapshot.messages).toEqual([expect.objectContaining({ state: 'delayed', dueInMs: 750 })])
  })

  it('counts the time since takenAt on the restoring loop’s clock: a delayed message keeps its due time', async () => {
    const snapshot: LoopSnapshot = await (async () => {
      const clock = new VirtualClock(0, EPOCH)
      const loop = createLoop<Messages>({ clock })
      loop.on('job', () => {})
      loop.postDelayed('job', 7, 1_000)
      return loop.stop({ deadlineMs: 0 })
    })()
    // The restoring process starts 400 ms (wall) later: 600 ms are left, never fewer, never more.
    const clock = new VirtualClock(0, EPOCH + 400)
    const loop = createLoop<Messages>({ clock })
    const started: number[] = []
    loop.on('job', () => {
      started.push(clock.now())
    })
    expect(loop.restore(snapshot)).toBe(1)
    await clock.advance(599)
    expect(started).toEqual([])
    await clock.advance(1)
    expect(started).toEqual([600])
    await loop.stop()
  })

  it('re-admits one handed-over message with its wait counted from now (readmit)', async () => {
    const clock = new VirtualClock(0, EPOCH)
    const loop = createLoop<Messages>({ clock })
    const started: number[] = []
    loop.on('job', () => {
      started.push(clock.now())
    })
    const message = {
      id: 'elsewhere:1',
      type: 'job',
      payload: 3,
      priority: 4,
      traceId: 't-1',
      hops: 0,
      state: 'delayed',
      dueInMs: 300,
      attempts: [],
    } as const
    expect(loop.readmit(message)?.payload).toBe(3)
    await clock.advance(299)
    expect(started).toEqual([])
    await clock.advance(1)
    expect(started).toEqual([300])
    const m = loop.metrics().counters
    expect([m.posted, m.accepted, m.rejected, m.restored]).toEqual([1, 1, 0, 1])
    await loop.stop()
  })
})
