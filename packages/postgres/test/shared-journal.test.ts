/**
 * Loops sharing one journal: the messages of a loop whose process "died" (its lease expired, it
 * commits nothing more) are run by another loop of the journal, once, while it runs.
 */
import { createLoop } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { describePostgres, eventually, expireLease, owners, useDatabase } from './fixtures.js'

interface Jobs {
  job: { n: number }
}

describePostgres('loops sharing one journal', () => {
  const db = useDatabase()

  describe('watch()', () => {
    it("runs a dead loop's messages once in a live loop of the journal, and fences the dead loop's writes", async () => {
      const deadStore = await db.open({ owner: 'dead' })
      const dead = createLoop<Jobs>({ store: deadStore, logger: false })
      const ranAfterResume: number[] = []
      dead.on('job', (m) => {
        ranAfterResume.push(m.payload.n)
      })
      dead.start()
      dead.pause() // nothing runs: its messages stay unfinished in the journal
      for (const n of [1, 2, 3]) dead.post('job', { n })
      await dead.flushed()
      await expireLease(db.admin, db.journal(), 'dead') // as if its process had frozen or died

      const ran: number[] = []
      const live = createLoop<Jobs>({ store: await db.open({ owner: 'live', renewEveryMs: 20 }), logger: false })
      live.on('job', (m) => {
        ran.push(m.payload.n)
      })
      live.start()
      await eventually(() => (ran.length === 3 ? true : undefined))
      await live.drain()
      await live.flushed()
      expect(ran).toEqual([1, 2, 3])
      expect(await owners(db.admin, db.journal())).toEqual({}) // finished, and removed by their new owner
      await live.stop()

      const errors: string[] = []
      dead.events.on('store-error', (e) => errors.push(e.operation))
      dead.resume()
      await dead.drain()
      await dead.stop() // its commits are fenced; the stop still resolves
      expect(errors).toContain('lease')
      // Fencing keeps the journal right, not the effects: the resumed loop ran what it held in memory
      // (the README's "not guaranteed" — effects must be idempotent).
      expect(ranAfterResume).toEqual([1, 2, 3])
      expect(await owners(db.admin, db.journal())).toEqual({})
    })
  })
})
