/**
 * The store-level contract every journal store passes (`Store` in `src/contracts/store.ts` is the
 * spec): what a reopened store recovers after any sequence of batches — exactly what was committed,
 * in first-journaled order, expired keys left out — and that a batch that fails changes nothing.
 *
 * ```ts
 * describeStoreContract('SqliteStore', { open: () => …, reopen: (previous) => … })
 * ```
 *
 * Store-agnostic: a store's own tests (crash, disk full, its files) live with it.
 */
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import type { JournalBatch, Store } from '../../src/index.js'
import {
  attempt,
  batch,
  batchArb,
  byKey,
  EXPIRED_AT,
  FAR_FUTURE,
  fullRecord,
  jsonCopy,
  key,
  letter,
  normalized,
  record,
  StoreModel,
} from './store-fixtures.js'

/** How the contract gets stores. */
export interface StoreHarness {
  /** A new, empty store (a fresh file, schema, database …). */
  open(): Promise<Store> | Store
  /** A restart: a new store over what `previous` committed; `previous` is not used again. */
  reopen(previous: Store): Promise<Store> | Store
  /** Runs after each test, once every store it opened is closed. */
  cleanup?(): Promise<void> | void
}

/** What a failed commit throws, or rejects with (a store may be async). */
async function commitError(store: Store, b: JournalBatch): Promise<unknown> {
  try {
    await store.commit(b)
  } catch (error) {
    return error
  }
  throw new Error(`${store.name} accepted a batch it should have refused`)
}

/**
 * Declares the contract's tests for one store.
 *
 * @param name - the store, as the describe block names it
 * @param harness - how to open, reopen and clean up
 */
export function describeStoreContract(name: string, harness: StoreHarness): void {
  describe(`${name} (store contract)`, () => {
    const opened: Store[] = []
    const open = async () => track(await harness.open())
    const reopen = async (previous: Store) => track(await harness.reopen(previous))
    const track = (store: Store) => {
      opened.push(store)
      return store
    }
    /** Commits each batch, reopens, returns the new store. */
    const commitAndReopen = async (store: Store, ...batches: JournalBatch[]) => {
      for (const b of batches) await store.commit(b)
      return reopen(store)
    }

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close()
      await harness.cleanup?.()
    })

    describeRecovery(open, commitAndReopen)
    describeFailures(open, reopen)
    describeVolume(open, reopen, commitAndReopen)
  })
}

type Open = () => Promise<Store>
type Reopen = (previous: Store) => Promise<Store>
type CommitAndReopen = (store: Store, ...batches: JournalBatch[]) => Promise<Store>

function describeRecovery(open: Open, commitAndReopen: CommitAndReopen): void {
  it('an empty store recovers nothing, before and after a reopen', async () => {
    const store = await open()
    expect(store.name).toEqual(expect.any(String))
    expect(store.recovered()).toEqual({ messages: [], deadLetters: [], keys: [] })
    expect((await commitAndReopen(store)).recovered()).toEqual({ messages: [], deadLetters: [], keys: [] })
  })

  it('a reopened store recovers exactly what was committed, every field of every row', async () => {
    const rows = batch({
      messages: [fullRecord('a'), record('b', { payloadJson: 'null', key: 7 }), fullRecord('c', 'delayed')],
      deadLetters: [letter('d1'), letter('d2')],
      keys: [key('k1'), key('k2', FAR_FUTURE, 'failed')],
    })
    const bare = record('e')
    const { payloadJson: _, key: __, ...noPayload } = bare
    const reopened = await commitAndReopen(await open(), rows, batch({ messages: [noPayload] }))
    const got = reopened.recovered()
    expect(got.messages).toEqual(jsonCopy([...rows.messages, noPayload]))
    expect(got.messages[0]?.checkpoint).toEqual({ step: 'charged', at: [1, 2, { nested: null }], ok: true })
    expect(got.messages[3]).not.toHaveProperty('payloadJson')
    expect(got.deadLetters).toEqual(jsonCopy(rows.deadLetters))
    expect(byKey(got.keys)).toEqual(jsonCopy(rows.keys))
  })

  it('a replaced record keeps its first-journaled place; an id journaled again after removal goes last', async () => {
    const store = await open()
    const reopened = await commitAndReopen(
      store,
      batch({ messages: [record('a'), record('b'), record('c')] }),
      batch({ messages: [record('a', { state: 'retry-scheduled', attempts: [attempt(1)] })] }),
      batch({ removed: ['b'], messages: [record('d')] }),
      batch({ messages: [record('b', { hops: 1 })] }),
    )
    const got = reopened.recovered().messages
    expect(got.map((r) => r.id)).toEqual(['a', 'c', 'd', 'b'])
    expect(got[0]).toMatchObject({ state: 'retry-scheduled', attempts: [{ attempt: 1 }] })
    expect(got[3]).toMatchObject({ hops: 1 })
  })

  it('removed rows are gone, and removing an id the store does not hold is harmless', async () => {
    const reopened = await commitAndReopen(
      await open(),
      batch({ messages: [record('a'), record('b')], deadLetters: [letter('d')], keys: [key('k'), key('j')] }),
      batch({ removed: ['a', 'never-journaled'], deadLettersRemoved: ['d', 'nope'], keysRemoved: ['k', 'nope'] }),
    )
    expect(reopened.recovered()).toEqual({ messages: jsonCopy([record('b')]), deadLetters: [], keys: [key('j')] })
  })

  it('dead letters are put, replaced in place and removed; keys likewise', async () => {
    const reopened = await commitAndReopen(
      await open(),
      batch({ deadLetters: [letter('d1'), letter('d2'), letter('d3')], keys: [key('k1'), key('k2')] }),
      batch({ deadLetters: [letter('d1', 42)], deadLettersRemoved: ['d2'], keys: [key('k1', FAR_FUTURE, 'failed')] }),
      batch({ keysRemoved: ['k2'] }),
    )
    const got = reopened.recovered()
    expect(got.deadLetters.map((l) => [l.id, l.atEpochMs])).toEqual([
      ['d1', 42],
      ['d3', 1_700_000_000_000],
    ])
    expect(got.keys).toEqual([key('k1', FAR_FUTURE, 'failed')])
  })

  it('expired keys are not recovered', async () => {
    const reopened = await commitAndReopen(
      await open(),
      batch({ keys: [key('old', EXPIRED_AT), key('live'), key('soon', Date.now() + 3_600_000)] }),
      batch({ keys: [key('live-then-expired', EXPIRED_AT)] }),
    )
    expect(byKey(reopened.recovered().keys).map((k) => k.key)).toEqual(['live', 'soon'])
  })
}

function describeFailures(open: Open, reopen: Reopen): void {
  it('a batch that fails (a BigInt checkpoint JSON cannot take) throws and changes nothing', async () => {
    const store = await open()
    const before = batch({ messages: [record('a'), record('b')], deadLetters: [letter('d')], keys: [key('k')] })
    await store.commit(before)
    const failing = batch({
      messages: [record('b', { hops: 9 }), record('new'), record('bad', { checkpoint: 10n }), record('after')],
      removed: ['a'],
      deadLetters: [letter('d2')],
      deadLettersRemoved: ['d'],
      keys: [key('k2')],
      keysRemoved: ['k'],
    })
    expect(await commitError(store, failing)).toBeInstanceOf(Error)
    // The handle stays usable: the loop keeps the batch and commits again.
    await store.commit(batch({ messages: [record('c')] }))
    const got = (await reopen(store)).recovered()
    expect(got).toEqual({
      messages: jsonCopy([record('a'), record('b'), record('c')]),
      deadLetters: jsonCopy([letter('d')]),
      keys: [key('k')],
    })
  })

  it('close is idempotent; a commit after close throws and writes nothing', async () => {
    const store = await open()
    await store.commit(batch({ messages: [record('a')] }))
    await store.close()
    await store.close()
    expect(await commitError(store, batch({ messages: [record('late')] }))).toBeInstanceOf(Error)
    expect((await reopen(store)).recovered().messages.map((r) => r.id)).toEqual(['a'])
  })
}

function describeVolume(open: Open, reopen: Reopen, commitAndReopen: CommitAndReopen): void {
  it('many batches apply in order', async () => {
    const store = await open()
    const model = new StoreModel()
    for (let n = 0; n < 300; n++) {
      const b = batch({
        messages: Array.from({ length: 10 }, (_, i) => record(`m${n}-${i}`, { hops: n })),
        // Each batch finishes half of the one before and replaces another of its records.
        removed: n === 0 ? [] : [0, 2, 4, 6, 8].map((i) => `m${n - 1}-${i}`),
        keys: n % 10 === 0 ? [key(`k${n}`)] : [],
      })
      const replaced = n === 0 ? [] : [record(`m${n - 1}-1`, { state: 'delayed', dueAtEpochMs: n })]
      const full = batch({ ...b, messages: [...replaced, ...b.messages] })
      await store.commit(full)
      model.apply(full)
    }
    expect(normalized((await reopen(store)).recovered())).toEqual(model.contents())
  }, 60_000)

  it('a batch of 100 000 records commits and is recovered in order', async () => {
    const records = Array.from({ length: 100_000 }, (_, i) => record(`r${i}`, { hops: i % 7 }))
    const store = await commitAndReopen(await open(), batch({ messages: records }))
    const got = store.recovered().messages
    expect(got.length).toBe(100_000)
    expect(JSON.stringify(got)).toBe(JSON.stringify(records))
    const drained = await commitAndReopen(store, batch({ removed: records.map((r) => r.id) }))
    expect(drained.recovered().messages).toEqual([])
  }, 120_000)

  it('recovers what a Map model holds after any generated batches and reopens (differential)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(batchArb, fc.boolean()), { maxLength: 10 }), async (steps) => {
        let store = await open()
        const model = new StoreModel()
        for (const [b, restart] of steps) {
          await store.commit(b)
          model.apply(b)
          if (restart) {
            store = await reopen(store)
            expect(normalized(store.recovered())).toEqual(model.contents())
          }
        }
        store = await reopen(store)
        expect(normalized(store.recovered())).toEqual(model.contents())
        await store.close()
      }),
      { numRuns: 60 },
    )
  }, 120_000)
}
