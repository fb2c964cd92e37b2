/**
 * Real processes: a child holding a store is frozen with SIGSTOP past its lease, or killed with
 * SIGKILL while it commits.
 */
import { fileURLToPath } from 'node:url'
import type { JournalRecord } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { Child } from './child-process.js'
import { describePostgres, ids, owners, useDatabase } from './fixtures.js'

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describePostgres('PostgresStore across processes', () => {
  const db = useDatabase()

  describe('a frozen process (SIGSTOP past its lease)', () => {
    it('is fenced once another store took its rows over: after SIGCONT its commits write nothing', async () => {
      const journal = db.journal()
      const child = new Child(CHILD, {
        mode: 'hold',
        url: db.url,
        journal,
        owner: 'frozen',
        leaseMs: 400,
        renewEveryMs: 100,
        rows: ['f0', 'f1', 'f2'],
      })
      try {
        await child.waitFor(/^ready \d+$/)
        child.process.kill('SIGSTOP')
        await sleep(900) // real time: the lease lapses by the server's clock while the child cannot renew it
        const heir = await db.open({ owner: 'heir' })
        expect(ids(heir.recovered().messages)).toEqual(['f0', 'f1', 'f2'])
        child.process.kill('SIGCONT')
        child.send('commit f3')
        expect(await child.waitFor(/^(committed|refused)/)).toMatch(
          /^refused lease Journal store .* failed to lease: the lease of owner "frozen" \(token \d+\) is lost/,
        )
        expect(await owners(db.admin, journal)).toEqual({ f0: 'heir', f1: 'heir', f2: 'heir' })
        const leases = await db.admin.query('SELECT owner FROM flowing.leases WHERE journal = $1', [journal])
        expect(leases.rows).toEqual([{ owner: 'heir' }])
        await heir.commit({
          messages: [],
          removed: ['f0'],
          deadLetters: [],
          deadLettersRemoved: [],
          keys: [],
          keysRemoved: [],
        })
        expect(await owners(db.admin, journal)).toEqual({ f1: 'heir', f2: 'heir' })
      } finally {
        await child.kill()
      }
    })

    it('keeps writing after a freeze shorter than its lease (the control)', async () => {
      const journal = db.journal()
      const child = new Child(CHILD, {
        mode: 'hold',
        url: db.url,
        journal,
        owner: 'napping',
        leaseMs: 2_000,
        renewEveryMs: 500,
        rows: ['n0'],
      })
      try {
        await child.waitFor(/^ready \d+$/)
        child.process.kill('SIGSTOP')
        await sleep(200)
        child.process.kill('SIGCONT')
        child.send('commit n1')
        expect(await child.waitFor(/^(committed|refused)/)).toBe('committed n1')
        expect(await owners(db.admin, journal)).toEqual({ n1: 'napping' })
      } finally {
        await child.kill()
      }
    })
  })

  describe('a process killed with SIGKILL while it commits', () => {
    it('leaves a prefix of its batches, whole, no shorter than what it reported committed (20 kills)', async () => {
      const rounds = Array.from({ length: 20 }, (_, i) => i)
      for (let wave = 0; wave < rounds.length; wave += 4) {
        await Promise.all(rounds.slice(wave, wave + 4).map((i) => killOnce(i)))
      }
    }, 120_000)
  })

  // One child per round: killed after a few batches (how many, and how long after, vary by round).
  async function killOnce(round: number): Promise<void> {
    const journal = `crash-${round}`
    const child = new Child(CHILD, { mode: 'batches', url: db.url, journal, owner: 'crasher' })
    await child.waitFor(new RegExp(`^committed ${round % 7}$`))
    await sleep((round * 13) % 40)
    await child.kill()
    const reported = Math.max(...child.lines.filter((l) => l.startsWith('committed ')).map((l) => Number(l.slice(10))))

    const store = await db.open({ journal, owner: 'crasher' })
    const messages = store.recovered().messages
    const batches = messages.filter((r) => r.id !== 'last').map((r) => payload(r).n)
    const kept = new Set(batches).size
    expect(kept, `round ${round}: batches kept vs reported committed`).toBeGreaterThanOrEqual(reported + 1)
    // A prefix, in order, each batch whole: 0×10, 1×10, …, (kept-1)×10.
    expect(batches).toEqual(Array.from({ length: kept * 10 }, (_, k) => Math.floor(k / 10)))
    const last = messages.find((r) => r.id === 'last')
    expect(last === undefined ? undefined : payload(last).n).toBe(kept - 1)
  }
})

function payload(r: JournalRecord): { n: number } {
  return JSON.parse(r.payloadJson ?? 'null') as { n: number }
}
