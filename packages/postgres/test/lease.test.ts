import { type StoreContents, StoreError } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { postgresStore } from '../src/index.js'
import { batch, describePostgres, eventually, expireLease, ids, owners, record, useDatabase } from './fixtures.js'

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => record(`${prefix}${i}`))

describePostgres('PostgresStore leases', () => {
  const db = useDatabase()

  describe('takeover at open', () => {
    it("recovers the rows of an owner whose lease expired without close, and fences that owner's store", async () => {
      const a = await db.open({ owner: 'A' })
      await a.commit(batch({ messages: range('a', 3) }))
      await expireLease(db.admin, db.journal(), 'A')

      const b = await db.open({ owner: 'B' })
      expect(ids(b.recovered().messages)).toEqual(['a0', 'a1', 'a2'])
      expect(await owners(db.admin, db.journal())).toEqual({ a0: 'B', a1: 'B', a2: 'B' })

      const late = a.commit(batch({ messages: [record('a3')], removed: ['a0'] }))
      await expect(late).rejects.toBeInstanceOf(StoreError)
      await expect(late).rejects.toMatchObject({
        code: 'ERR_FLOWING_STORE',
        store: a.name,
        operation: 'lease',
        message: expect.stringMatching(
          /failed to lease: the lease of owner "A" \(token \d+\) is lost: another process took its messages over after it expired; this store writes nothing more/,
        ),
      })
      expect(await owners(db.admin, db.journal())).toEqual({ a0: 'B', a1: 'B', a2: 'B' }) // nothing written
      expect(a.lease.lost).toMatch(/took its messages over/)
      // Fenced for good: the next commit is refused without asking the server.
      await expect(a.commit(batch({ messages: [record('a4')] }))).rejects.toMatchObject({ operation: 'lease' })
    })

    it('fences a store whose lease expired even when nobody took its rows over', async () => {
      const a = await db.open({ owner: 'A' })
      await a.commit(batch({ messages: [record('x')] }))
      await expireLease(db.admin, db.journal(), 'A')
      await expect(a.commit(batch({ removed: ['x'] }))).rejects.toMatchObject({
        operation: 'lease',
        message: expect.stringContaining('it expired (no renewal or commit reached the server within leaseMs)'),
      })
      expect(await owners(db.admin, db.journal())).toEqual({ x: 'A' })
    })

    it('leaves the rows of a live owner alone', async () => {
      const a = await db.open({ owner: 'A' })
      await a.commit(batch({ messages: range('a', 2) }))
      const b = await db.open({ owner: 'B' })
      expect(b.recovered().messages).toEqual([])
      await a.commit(batch({ removed: ['a0'] }))
      expect(await owners(db.admin, db.journal())).toEqual({ a1: 'A' })
    })

    it('gives every row to exactly one of several stores opening at once', async () => {
      for (const dead of ['A', 'B', 'C']) {
        const store = await db.open({ owner: dead })
        await store.commit(batch({ messages: range(`${dead}-`, 700) }))
        await expireLease(db.admin, db.journal(), dead)
      }
      const opening = Array.from({ length: 6 }, (_, i) =>
        postgresStore({ connectionString: db.url, journal: db.journal(), owner: `heir-${i}` }),
      )
      const heirs = await Promise.all(opening)
      try {
        const recovered = heirs.flatMap((h) => ids(h.recovered().messages))
        expect(recovered).toHaveLength(2100)
        expect(new Set(recovered).size).toBe(2100)
        const byOwner = await owners(db.admin, db.journal())
        for (const heir of heirs) {
          for (const id of ids(heir.recovered().messages)) expect(byOwner[id]).toBe(heir.owner)
        }
      } finally {
        await Promise.all(heirs.map((h) => h.close()))
      }
    })

    it('lets no commit of the old owner through once the new one has taken over', async () => {
      const a = await db.open({ owner: 'A' })
      const resolved: number[] = []
      const writing = (async () => {
        for (let n = 0; ; n++) {
          try {
            await a.commit(batch({ messages: range(`n${n}-`, 5) }))
            resolved.push(n)
          } catch (error) {
            return error
          }
        }
      })()
      await eventually(() => (resolved.length >= 5 ? true : undefined))
      await expireLease(db.admin, db.journal(), 'A')
      const b = await db.open({ owner: 'B' })
      expect(await writing).toMatchObject({ operation: 'lease' })
      const written = resolved.flatMap((n) => ids(range(`n${n}-`, 5)))
      expect(ids(b.recovered().messages)).toEqual(written)
      expect(await owners(db.admin, db.journal())).toEqual(Object.fromEntries(written.map((id) => [id, 'B'])))
    })

    it('hands the rows a closed store left to the next store at once', async () => {
      const a = await db.open({ owner: 'A' })
      await a.commit(batch({ messages: range('a', 2) }))
      await a.close()
      const b = await db.open({ owner: 'B' })
      expect(ids(b.recovered().messages)).toEqual(['a0', 'a1'])
    })

    it('recovers its own rows at once under a stable owner, and fences the store that had them', async () => {
      const first = await db.open({ owner: 'pod-1' })
      await first.commit(batch({ messages: range('p', 2) }))
      const second = await db.open({ owner: 'pod-1' })
      expect(ids(second.recovered().messages)).toEqual(['p0', 'p1'])
      expect(second.lease.token).toBeGreaterThan(first.lease.token)
      await expect(first.commit(batch({ removed: ['p0'] }))).rejects.toMatchObject({
        operation: 'lease',
        message: expect.stringContaining(
          `another store took the lease again for the same owner (token ${second.lease.token})`,
        ),
      })
      await second.commit(batch({ removed: ['p0'] }))
      expect(await owners(db.admin, db.journal())).toEqual({ p1: 'pod-1' })
    })
  })

  describe('commit()', () => {
    it("removes only the committing owner's rows; dead letters and keys are the journal's", async () => {
      const a = await db.open({ owner: 'A' })
      const b = await db.open({ owner: 'B' })
      await a.commit(batch({ messages: [record('mine')], deadLetters: [], keys: [] }))
      await b.commit(batch({ removed: ['mine'] }))
      expect(await owners(db.admin, db.journal())).toEqual({ mine: 'A' })
    })

    it('writes every row as the committing owner', async () => {
      const a = await db.open({ owner: 'A' })
      await a.commit(batch({ messages: range('a', 2) }))
      await a.close()
      const b = await db.open({ owner: 'B' })
      await b.commit(batch({ messages: [record('a0', { hops: 1 }), record('b0')] }))
      expect(await owners(db.admin, db.journal())).toEqual({ a0: 'B', a1: 'B', b0: 'B' })
    })
  })

  describe('renewal', () => {
    it('keeps an idle store its lease well past leaseMs', async () => {
      const a = await db.open({ owner: 'A', leaseMs: 200, renewEveryMs: 40 })
      await a.commit(batch({ messages: [record('a')] }))
      await new Promise((resolve) => setTimeout(resolve, 700)) // real time: the lease runs on the server's clock
      const b = await db.open({ owner: 'B' })
      expect(b.recovered().messages).toEqual([])
      await a.commit(batch({ removed: ['a'] }))
      expect(a.lease.lost).toBeUndefined()
      expect(a.backgroundError).toBeUndefined()
    })
  })

  describe('watch()', () => {
    it('hands the rows it takes over while running to the loop', async () => {
      const heir = await db.open({ owner: 'heir', leaseMs: 1_000, renewEveryMs: 30 })
      const adopted: StoreContents[] = []
      heir.watch((contents) => adopted.push(contents))
      const dead = await db.open({ owner: 'dead' })
      await dead.commit(batch({ messages: range('d', 5) }))
      await expireLease(db.admin, db.journal(), 'dead')

      const got = await eventually(() => adopted[0])
      expect(ids(got.messages)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4'])
      expect(got.deadLetters).toEqual([])
      expect(heir.adopted).toBe(5)
      expect(await owners(db.admin, db.journal())).toEqual({
        d0: 'heir',
        d1: 'heir',
        d2: 'heir',
        d3: 'heir',
        d4: 'heir',
      })
      await heir.commit(batch({ removed: ids(got.messages) }))
      expect(await owners(db.admin, db.journal())).toEqual({})
      await expect(dead.commit(batch({ messages: [record('d5')] }))).rejects.toMatchObject({ operation: 'lease' })
    })

    it('hands each row of owners dying one after another to exactly one of several watching stores', async () => {
      const heirs = await Promise.all(
        [0, 1, 2, 3].map((i) => db.open({ owner: `h${i}`, leaseMs: 2_000, renewEveryMs: 15 })),
      )
      const adopted = new Map<string, string[]>()
      for (const heir of heirs) {
        heir.watch((contents) =>
          adopted.set(heir.owner, [...(adopted.get(heir.owner) ?? []), ...ids(contents.messages)]),
        )
      }
      for (let d = 0; d < 10; d++) {
        const dead = await db.open({ owner: `d${d}` })
        await dead.commit(batch({ messages: range(`d${d}-`, 50) }))
        await expireLease(db.admin, db.journal(), `d${d}`)
      }
      const all = await eventually(() => {
        const got = [...adopted.values()].flat()
        return got.length >= 500 ? got : undefined
      })
      expect(all).toHaveLength(500)
      expect(new Set(all).size).toBe(500)
      const byOwner = await owners(db.admin, db.journal())
      for (const [owner, taken] of adopted) for (const id of taken) expect(byOwner[id]).toBe(owner)
    })

    it('takes nothing over while running unless the loop watches', async () => {
      const idle = await db.open({ owner: 'idle', leaseMs: 1_000, renewEveryMs: 20 })
      const dead = await db.open({ owner: 'dead' })
      await dead.commit(batch({ messages: [record('d')] }))
      await expireLease(db.admin, db.journal(), 'dead')
      await new Promise((resolve) => setTimeout(resolve, 200)) // ten renewals
      expect(await owners(db.admin, db.journal())).toEqual({ d: 'dead' })
      expect(idle.adopted).toBe(0)
    })
  })
})
