import { describe, expect, it } from 'vitest'
import type { TunerModule } from '../src/module.js'
import { runTrial } from '../src/trial.js'

interface Messages {
  order: number
  receipt: number
}

describe('a trial counts its samples only', () => {
  it('does not count the follow-ups a handler posts as finished samples', async () => {
    let orders = 0
    const mod: TunerModule<Messages> = {
      register(loop) {
        loop.on('order', async (m, ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 2))
          orders++
          ctx.post('receipt', m.payload)
        })
        loop.on('receipt', () => {})
      },
      sample: (i) => ({ type: 'order', payload: i }),
    }
    const result = await runTrial(mod as unknown as TunerModule, {
      workers: 2,
      durationMs: 150,
      rate: undefined,
      capacity: 1_000,
    })
    // Each order is one sample; its receipt is not a second one (it read as twice the throughput).
    expect(result.succeeded).toBeGreaterThan(0)
    expect(result.succeeded).toBeLessThanOrEqual(orders)
    expect(result.succeeded).toBeGreaterThanOrEqual(orders - 4) // at most 2 × workers in flight at the end
  })
})
