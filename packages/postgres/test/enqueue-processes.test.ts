/**
 * Enqueue across real processes killed with SIGKILL: an enqueuing process killed right after its
 * COMMIT, and a loop's process killed after its store took enqueued messages over but before they
 * started. Each message still runs once.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { Child } from './child-process.js'
import { recorder, sleep, stopAll } from './enqueue-fixtures.js'
import { describePostgres, eventually, useDatabase } from './fixtures.js'

const CHILD = fileURLToPath(new URL('./enqueue-child.ts', import.meta.url))

describePostgres('enqueue() across processes', () => {
  const db = useDatabase()

  describe('the enqueuing process killed (SIGKILL) right after its COMMIT', () => {
    it('leaves its messages committed: the loop runs each once', async () => {
      const r = recorder(await db.open({ leaseMs: 60_000, renewEveryMs: 20_000 }))
      const child = new Child(CHILD, { mode: 'enqueue', url: db.url, journal: db.journal(), count: 5 })
      try {
        await child.exited
        expect(child.process.signalCode).toBe('SIGKILL')
        expect(child.lines).toEqual(['committed'])
        await eventually(() => (r.ran.length === 5 ? true : undefined))
        await sleep(200)
        expect(r.ran).toEqual([0, 1, 2, 3, 4])
      } finally {
        await child.kill()
        await stopAll(r)
      }
    })
  })

  describe('the loop process killed between the notification and the start', () => {
    it("lets another store take the messages over once the dead store's lease expires: each runs once", async () => {
      await (await db.open()).close()
      const victim = new Child(CHILD, {
        mode: 'adopt',
        url: db.url,
        journal: db.journal(),
        owner: 'victim',
        leaseMs: 600,
        renewEveryMs: 100,
      })
      try {
        expect(await victim.waitFor(/listening$/)).toBe('listening')
        const enqueuer = new Child(CHILD, { mode: 'enqueue', url: db.url, journal: db.journal(), count: 3 })
        await enqueuer.exited
        await victim.waitFor(/^adopted 3$/)
        await victim.kill() // its store holds the three rows now; nothing of them started
        expect(victim.lines).not.toContain('ran')
        const owners = await db.admin.query('SELECT DISTINCT owner FROM flowing.messages WHERE journal = $1', [
          db.journal(),
        ])
        expect(owners.rows).toEqual([{ owner: 'victim' }])
        const heir = recorder(await db.open({ owner: 'heir', leaseMs: 5_000, renewEveryMs: 50 }))
        await eventually(() => (heir.ran.length === 3 ? true : undefined))
        await sleep(300)
        expect(heir.ran.sort()).toEqual([0, 1, 2])
        await stopAll(heir)
      } finally {
        await victim.kill()
      }
    })
  })
})
