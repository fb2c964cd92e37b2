import { describe, expect, it } from 'vitest'
import { MemoryStore } from '../../src/index.js'
import { describeStoreContract } from '../contract/store-contract.js'
import { batch, key, record } from '../contract/store-fixtures.js'

describeStoreContract('MemoryStore', {
  open: () => new MemoryStore(),
  reopen: (previous) => (previous as MemoryStore).reopen(),
})

describe('MemoryStore', () => {
  describe('reopen()', () => {
    it('supersedes the old handle: it refuses every later commit, as a crashed process writes nothing', () => {
      const store = new MemoryStore('journal')
      store.commit(batch({ messages: [record('a')] }))
      const next = store.reopen()
      expect(() => store.commit(batch({ messages: [record('b')] }))).toThrow('journal was reopened')
      expect(next.recovered().messages.map((r) => r.id)).toEqual(['a'])
    })
  })

  describe('recovered()', () => {
    it('leaves out keys expired on its wall clock', () => {
      let now = 1_000
      const store = new MemoryStore('journal', () => now)
      store.commit(batch({ keys: [key('a', 2_000), key('b', 3_000)] }))
      now = 2_000
      expect(store.recovered().keys.map((k) => k.key)).toEqual(['b'])
      expect([store.commits, store.rows]).toEqual([1, { messages: 0, deadLetters: 0, keys: 2 }])
    })
  })
})
