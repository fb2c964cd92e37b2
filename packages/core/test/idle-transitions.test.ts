/**
 * `idle` fires "on each transition to idle" (LoopEvents): never twice for one idle stretch.
 *
 * Fails today: `Outcomes.idleCheck()` emits `idle` on every call while the loop is idle (it keeps no
 * memory of the last transition), and `stop({ drain: false })` (Stopper.#escalate) calls it
 * unconditionally — so stopping a loop that was already idle emits a second `idle` with no work in
 * between. A draining `stop()` of the same loop emits none.
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
