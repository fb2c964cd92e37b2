import { describe, expect, it } from 'vitest'
import { type Clock, createLoop, type LoopOptions, VirtualClock } from '../src/index.js'

interface Messages {
  job: number
}

// A virtual clock that user code can move synchronously (as a slow listener moves real time).
function steppedClock(): Clock & { step(ms: number): void; drive: VirtualClock } {
  const drive = new VirtualClock()
  let skew = 0
  return {
    drive,
    step: (ms) => {
      skew += ms
    },
    now: () => drive.now() + skew,
    setTimeout: (fn, ms) => drive.setTimeout(fn, ms),
    clearTimeout: (handle) => drive.clearTimeout(handle),
    setImmediate: (fn) => drive.setImmediate(fn),
  }
}

type Slow = (clock: ReturnType<typeof steppedClock>) => {
  options?: Partial<LoopOptions>
  listen?: (loop: ReturnType<typeof createLoop<Messages>>) => void
}

// Each kind of user code that runs between one attempt's end and the next one's start.
const SLOW_USER_CODE: Record<string, Slow> = {
  'a succeeded listener': (clock) => ({
    listen: (loop) => loop.events.on('succeeded', (m) => m.payload === 1 && clock.step(50)),
  }),
  'a finished listener': (clock) => ({
    listen: (loop) => loop.events.on('finished', (m) => m.payload === 1 && clock.step(50)),
  }),
  'the message log': (clock) => {
    let lines = 0
    const slowFirst = () => lines++ === 0 && clock.step(50)
    return { options: { messageLog: { info: slowFirst, warn: slowFirst } } }
  },
}

describe('the clock reading an attempt reuses', () => {
  for (const [name, slow] of Object.entries(SLOW_USER_CODE)) {
    it(`is not reused across ${name}: the next attempt starts at the time after it`, async () => {
      const clock = steppedClock()
      const { options, listen } = slow(clock)
      const loop = createLoop<Messages>({ clock, workers: 1, traces: 'all', ...options })
      loop.on('job', () => {})
      listen?.(loop)
      loop.post('job', 1)
      const second = loop.post('job', 2)
      await loop.drain()
      const startedAt = loop.trace(second.id)?.attempts[0]?.startedAt
      // The first attempt ended at 0; the slow user code after it took 50 ms: the second began at ≥ 50.
      expect(startedAt).toBeGreaterThanOrEqual(50)
      await loop.stop()
    })
  }
})
