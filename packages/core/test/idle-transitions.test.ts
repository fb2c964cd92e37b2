/**
 * `idle` fires "on each transition to idle" (LoopEvents): never twice for one idle stretch. It did:
 * `stop({ drain: false })` checks for idle unconditionally, and the check emitted on every call while
 * the loop was idle — a second `idle` with no work in between.
 */
import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

// A loop that ran one message and went idle, counting its `idle` events.
async function idleAfterOne() {
  const { clock, loop } = virtualLoop()
  const seen = { idles: 0 }
  loop.events.on('idle', () => seen.idles++)
  loop.on('work', () => {})
  loop.post('work', 1)
  await clock.run()
  expect(seen.idles).toBe(1)
  return { clock, loop, seen }
}

describe('idle', () => {
  it.each([true, false])('is not emitted again by stop({ drain: %s }) of a loop already idle', async (drain) => {
    const { clock, loop, seen } = await idleAfterOne()
    const stopped = loop.stop({ drain })
    await clock.run()
    await stopped
    expect(seen.idles).toBe(1)
  })

  it('is not emitted again when a stop cancels a delayed message that was never due', async () => {
    const { loop, seen } = await idleAfterOne()
    loop.postDelayed('work', 2, 60_000)
    await loop.stop({ drain: false })
    expect(seen.idles).toBe(1)
  })

  it('is emitted again after new work, however short', async () => {
    const { clock, loop, seen } = await idleAfterOne()
    loop.post('work', 2)
    await clock.run()
    expect(seen.idles).toBe(2)
    await loop.stop()
  })
})
