import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('WorkerPool', () => {
  describe('detach()', () => {
    it('keeps the slot of a timed-out handler held from its timeout, also with graceMs: 0', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, timeoutMs: 10, graceMs: 0, retry: { maxAttempts: 1 } })
      const starts: string[] = []
      let executing = 0
      let peak = 0
      loop.events.on('zombies', () => starts.push('zombies event'))
      loop.on('work', async (m) => {
        starts.push(`${m.payload}@${clock.now()}`)
        peak = Math.max(peak, ++executing)
        await clock.sleep(m.payload === 1 ? 100 : 1)
        executing--
      })
      loop.post('work', 1)
      loop.post('work', 2)
      await clock.run()
      // 1 times out at 10 but runs until 100: the one worker is still its, so 2 waits for it.
      expect(starts).toEqual(['1@0', '2@100'])
      expect(peak).toBe(1)
    })

    it('holds the slots during the grace period too: never more handlers at once than workers, without an event', async () => {
      const { clock, loop } = virtualLoop({ workers: 2, timeoutMs: 10, retry: { maxAttempts: 1 } })
      let executing = 0
      let peak = 0
      const events: number[] = []
      loop.events.on('zombies', (count) => events.push(count))
      loop.on('work', async () => {
        peak = Math.max(peak, ++executing)
        await clock.sleep(1_000) // well within the default 5 s grace
        executing--
      })
      for (let i = 0; i < 6; i++) loop.post('work', i)
      await clock.run()
      expect(peak).toBe(2)
      expect(events).toEqual([])
      expect(loop.metrics().counters).toMatchObject({ timedOut: 6, lateCompletions: 6 })
    })

    it('past maxZombies announces the excess once per crossing, before more handlers than workers run', async () => {
      const { clock, loop } = virtualLoop({ workers: 2, timeoutMs: 10, maxZombies: 1, retry: { maxAttempts: 1 } })
      const log: string[] = []
      let executing = 0
      loop.events.on('zombies', (count, zombies) => log.push(`zombies ${count} [${zombies.map((z) => z.ageMs)}]`))
      loop.on('work', async (m) => {
        log.push(`start ${m.payload} with ${executing++} running`)
        await clock.sleep(m.payload < 2 ? 100 : 5)
        executing--
      })
      for (let i = 0; i < 4; i++) loop.post('work', i)
      await clock.run()
      expect(log).toEqual([
        'start 0 with 0 running',
        'start 1 with 1 running',
        'zombies 2 [10,10]', // both timed out at 10: one over maxZombies, announced first
        'start 2 with 2 running',
        'start 3 with 2 running',
      ])
    })
  })
})
