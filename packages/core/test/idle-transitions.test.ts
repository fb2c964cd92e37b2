/**
 * `idle` fires "on each transition to idle" (LoopEvents): never twice for one idle stretch. It did:
 * `stop({ drain: false })` checks for idle unconditionally, and the check emitted on every call while
 * the loop was idle — a second `idle` with no work in between.
 */
import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('idle', () => {
  it.each([true, false])('is not emitted again by stop({ drain: %s }) of a loop already idle', async (drain) => {
    const { clock, loop } = virtualLoop()
    let idles = 0
    loop.events.on('idle', () => idles++)
    loop.on('work', () => {})
    loop.post('work', 1)
    await clock.run()
    expect(idles).toBe(1)
    const stopped = loop.stop({ drain })
    await clock.run()
    await stopped
    expect(idles).toBe(1)
  })
})
