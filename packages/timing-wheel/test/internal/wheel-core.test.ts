/**
 * White-box check of the mechanism without the public layer's argument checks: deadlines across
 * sixteen orders of magnitude (past ones included), ticks from 1 µs to 1 s, budgets and huge jumps,
 * against the reference model.
 */
import { describe, expect, it } from 'vitest'
import { WheelCore } from '../../src/internal/wheel-core.js'
import { mulberry32, ReferenceWheel } from '../fixtures.js'

describe('WheelCore', () => {
  it('matches the reference under every kind of load that moves timers between levels', () => {
    for (const [tickMs, seed] of [
      [1, 1],
      [0.001, 2],
      [1000, 3],
    ] as const) {
      const random = mulberry32(seed)
      let now = 1e6 * random()
      const core = new WheelCore<number>(tickMs, 1_000_000, now)
      const model = new ReferenceWheel()
      const ids: number[] = []
      for (let i = 0; i < 20_000; i++) {
        const r = random()
        if (r < 0.5) {
          const magnitude = 10 ** Math.floor(random() * 16)
          const deadline = Math.max(0, now + (random() - 0.05) * magnitude)
          ids.push(core.insert(deadline, ids.length))
          model.add(ids.length - 1, deadline)
        } else if (r < 0.8) {
          const k = Math.floor(random() * ids.length)
          expect(core.remove(ids[k] as number)).toBe(model.cancel(k))
        } else {
          now += random() < 0.95 ? random() * 100 : random() * 1e12
          const limit = random() < 0.2 ? 1 + Math.floor(random() * 5) : Number.POSITIVE_INFINITY
          expect(core.advance(now, limit)).toEqual(model.advance(now, limit))
        }
      }
      expect(core.clear()).toEqual(model.clear())
    }
  })
})
