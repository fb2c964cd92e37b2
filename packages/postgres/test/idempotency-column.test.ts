/**
 * The `idem_key` column a commit writes beside each message: a loop's commit never fails on it — two
 * stores committing one key at once both succeed, one row holding the key — and the key moves with a
 * message re-journaled under a new id (a takeover's re-admission), so an enqueue still sees it.
 */
import { describe, expect, it } from 'vitest'
import { appClient, enqueuerOf } from './enqueue-fixtures.js'
import { batch, describePostgres, record, useDatabase } from './fixtures.js'

describePostgres('the idempotency key column', () => {
  const db = useDatabase()

  const keyed = async () =>
    (
      await db.admin.query<{ id: string; idem_key: string | null }>(
        'SELECT id, idem_key FROM flowing.messages WHERE journal = $1 ORDER BY id',
        [db.journal()],
      )
    ).rows

  describe('written by commits', () => {
    it('never fails a commit: two stores committing one key at once both succeed, one row holds it', async () => {
      const [a, b] = await Promise.all([db.open({ owner: 'a' }), db.open({ owner: 'b' })])
      for (let round = 0; round < 10; round++) {
        const key = `k${round}`
        await Promise.all([
          a.commit(batch({ messages: [record(`a${round}`, { idempotencyKey: key })] })),
          b.commit(batch({ messages: [record(`b${round}`, { idempotencyKey: key })] })),
        ])
        const rows = (await keyed()).filter((r) => r.id.endsWith(String(round)))
        expect(rows).toHaveLength(2)
        expect(rows.filter((r) => r.idem_key === key)).toHaveLength(1)
      }
    })

    it('moves the key with a message re-journaled under a new id in one batch, so an enqueue sees it', async () => {
      const first = await db.open({ owner: 'first' })
      await first.commit(batch({ messages: [record('old', { idempotencyKey: 'moving' })] }))
      await first.close()
      const heir = await db.open({ owner: 'heir' }) // takes 'old' over, as a loop re-admits it:
      await heir.commit(batch({ removed: ['old'], messages: [record('new', { idempotencyKey: 'moving' })] }))
      expect(await keyed()).toEqual([{ id: 'new', idem_key: 'moving' }])
      const client = await appClient(db)
      try {
        await client.query('BEGIN')
        await expect(
          enqueuerOf(db).enqueue(client, 'email', { to: 'x', n: 1 }, { idempotencyKey: 'moving' }),
        ).rejects.toMatchObject({
          name: 'DuplicateMessageError',
        })
        await client.query('ROLLBACK')
      } finally {
        await client.end()
      }
    })
  })
})
