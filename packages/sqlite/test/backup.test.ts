/**
 * `store.backup(path)`: a consistent copy taken through the owner's own connection while a loop runs
 * (no other connection may read a journal a store holds), a journal a store opens as the original; and
 * its refusals, typed, leaving nothing behind.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLoop, InvalidArgumentError, StoreError } from '@flowing/core'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore } from '../src/index.js'

const dir = mkdtempSync(join(tmpdir(), 'flowing-backup-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('store.backup(path)', () => {
  it('copies what is committed while the loop runs; the copy opens as a journal', async () => {
    const store = sqliteStore({ path: join(dir, 'journal.db') })
    const loop = createLoop<{ job: { n: number } }>({ store, logger: false })
    loop.on('job', () => new Promise(() => {})) // nothing finishes: every message stays in the journal
    loop.start()
    for (let n = 0; n < 100; n++) loop.post('job', { n }, { key: `k${n % 3}` })
    await loop.flushed()
    const copy = store.backup(join(dir, 'copy.db'))
    expect(copy).toBe(join(dir, 'copy.db'))
    loop.post('job', { n: 100 }) // the loop goes on writing the original
    await loop.flushed()
    const restored = sqliteStore({ path: copy })
    const payloads = restored.recovered().messages.map((r) => JSON.parse(r.payloadJson ?? 'null').n)
    expect(payloads).toEqual(Array.from({ length: 100 }, (_, n) => n))
    restored.close()
    await loop.stop({ deadlineMs: 0 })
  })

  it('refuses a bad path, an existing file, the journal itself and a closed store — typed, nothing left behind', () => {
    const path = join(dir, 'second.db')
    const store = sqliteStore({ path })
    const before = readdirSync(dir).sort()
    expect(() => store.backup('' as string)).toThrow(InvalidArgumentError)
    expect(() => store.backup(42 as unknown as string)).toThrow(/Expected `path` to be a non-empty file path/)
    expect(() => store.backup(path)).toThrow(
      /failed to backup: .*second\.db exists already \(a backup overwrites nothing\)/,
    )
    expect(() => store.backup(join(dir, 'missing', 'copy.db'))).toThrow(StoreError)
    expect(readdirSync(dir).sort()).toEqual(before)
    store.close()
    let error: StoreError | undefined
    try {
      store.backup(join(dir, 'late.db'))
    } catch (e) {
      error = e as StoreError
    }
    expect(error).toBeInstanceOf(StoreError)
    expect([error?.operation, error?.message]).toEqual([
      'backup',
      `Journal store sqlite:${path} failed to backup: the store is closed`,
    ])
  })
})
