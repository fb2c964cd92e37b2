/**
 * The time posts are stamped with, on the real clock: one reading shared by a synchronous burst of up
 * to 64 posts, read again once the burst's synchronous run ends. The bounds checked are structural —
 * a stamp is a reading taken during one of the 64 posts before it (or its own), never after its own
 * post — so they hold however loaded the machine is.
 */
import { describe, expect, it } from 'vitest'
import { type Clock, createLoop, systemClock, VirtualClock } from '../src/index.js'
import { POSTS_PER_READING, PostClock, postClockOf } from '../src/internal/post-clock.js'

interface Messages {
  tick: number
}

const N = 20_000

describe('post times', () => {
  it('in a synchronous burst, are a reading taken at one of the 64 posts before (or at) each, never later', async () => {
    const loop = createLoop<Messages>({ autoStart: false, capacity: N })
    loop.on('tick', () => {})
    const before = new Float64Array(N)
    const after = new Float64Array(N)
    const stamps = new Float64Array(N)
    for (let i = 0; i < N; i++) {
      before[i] = performance.now()
      stamps[i] = loop.post('tick', i).postedAt
      after[i] = performance.now()
    }
    let readings = 1
    for (let i = 0; i < N; i++) {
      const first = Math.max(0, i - (POSTS_PER_READING - 1))
      expect(stamps[i]).toBeGreaterThanOrEqual(before[first] as number)
      expect(stamps[i]).toBeLessThanOrEqual(after[i] as number)
      if (i > 0 && stamps[i] !== stamps[i - 1]) readings++
    }
    // Shared: one reading per 64 posts (two equal readings in a row would only lower the count).
    expect(readings).toBeLessThanOrEqual(Math.ceil(N / POSTS_PER_READING))
    void loop.start()
    await loop.drain()
    await loop.stop()
  })

  it('are read again after the synchronous run that took the reading ends', async () => {
    const loop = createLoop<Messages>({ autoStart: false })
    loop.on('tick', () => {})
    loop.post('tick', 0)
    await Promise.resolve()
    const from = performance.now()
    const second = loop.post('tick', 1)
    expect(second.postedAt).toBeGreaterThanOrEqual(from)
    await loop.stop({ deadlineMs: 0 })
  })

  it('never go back: a burst after a burst is stamped at or after it', async () => {
    const loop = createLoop<Messages>({ autoStart: false, capacity: 1000 })
    loop.on('tick', () => {})
    let last = Number.NEGATIVE_INFINITY
    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 90; i++) {
        const t = loop.post('tick', i).postedAt
        expect(t).toBeGreaterThanOrEqual(last)
        last = t
      }
      await Promise.resolve()
    }
    await loop.stop({ deadlineMs: 0 })
  })
})

describe('PostClock', () => {
  it('is one object per clock, so every way into the queue of every loop on it stamps from one reading', () => {
    const a = new VirtualClock()
    const b = new VirtualClock()
    expect(postClockOf(a)).toBe(postClockOf(a))
    expect(postClockOf(a)).not.toBe(postClockOf(b))
    expect(postClockOf(systemClock)).toBe(postClockOf(systemClock))
  })

  it('stamps two loops on one clock from one reading: an entry never carries an older stamp than an earlier one', async () => {
    const first = createLoop<Messages>({ autoStart: false })
    const second = createLoop<Messages>({ autoStart: false })
    for (const loop of [first, second]) loop.on('tick', () => {})
    const stamps: number[] = []
    for (let i = 0; i < 500; i++) stamps.push((i % 2 === 0 ? first : second).post('tick', i).postedAt)
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThanOrEqual(stamps[i - 1] as number)
    expect(new Set(stamps).size).toBeLessThanOrEqual(Math.ceil(500 / POSTS_PER_READING))
    await first.stop({ deadlineMs: 0 })
    await second.stop({ deadlineMs: 0 })
  })

  it('reads its clock once per 64 calls within a synchronous run, and once more after it', async () => {
    let reads = 0
    const virtual = new VirtualClock()
    const counting: Clock = { ...systemClock, now: () => ++reads + virtual.now() }
    const clock = new PostClock(counting)
    for (let i = 0; i < 3 * POSTS_PER_READING; i++) clock.now()
    expect(reads).toBe(3)
    await Promise.resolve()
    expect(clock.now()).toBe(4)
    expect(reads).toBe(4)
  })
})
