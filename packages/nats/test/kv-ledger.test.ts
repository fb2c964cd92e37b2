import type { LedgerEntry } from '@flowing/core'
import { FlowingError } from '@flowing/errors'
import { type KV, Kvm } from '@nats-io/kv'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import {
  CLAIM_ATTEMPTS,
  KvIdempotencyStore,
  LedgerContendedError,
  LedgerEntryError,
  LedgerFencedError,
} from '../src/index.js'
import { describeNats, useConnections, useNatsServer } from './server.js'

describeNats('KvIdempotencyStore', () => {
  const server = useNatsServer()
  // A connection of its own: each store on one is another process, as far as NATS can tell.
  const connection = useConnections(server)
  let buckets = 0

  // `count` stores on `count` connections sharing a fresh bucket, and the raw bucket to inspect it.
  async function processes(count: number, ttlMs = 60_000): Promise<{ stores: KvIdempotencyStore[]; kv: KV }> {
    const bucket = `ledger-${++buckets}`
    const stores: KvIdempotencyStore[] = []
    for (let i = 0; i < count; i++) stores.push(await KvIdempotencyStore.open(await connection(), { bucket, ttlMs }))
    return { stores, kv: await new Kvm(await connection()).open(bucket) }
  }

  async function two(ttlMs?: number): Promise<[KvIdempotencyStore, KvIdempotencyStore, KV]> {
    const { stores, kv } = await processes(2, ttlMs)
    return [stores[0] as KvIdempotencyStore, stores[1] as KvIdempotencyStore, kv]
  }

  async function raw(kv: KV, key: string): Promise<{ value: unknown; revision: number; operation: string } | null> {
    const e = await kv.get(key)
    return e === null
      ? null
      : { value: e.length === 0 ? undefined : e.json(), revision: e.revision, operation: e.operation }
  }

  describe('open()', () => {
    it('creates the bucket with history 1 and a max age of ttlMs, named kv:<bucket>', async () => {
      const store = await KvIdempotencyStore.open(await connection(), { bucket: 'opened', ttlMs: 5_000 })
      expect(store.name).toBe('kv:opened')
      expect(store.bucket).toBe('opened')
      const status = await (await new Kvm(await connection()).open('opened')).status()
      expect([status.history, status.ttl]).toEqual([1, 5_000])
    })

    it('binds to an existing bucket, and refuses one whose max age differs', async () => {
      await KvIdempotencyStore.open(await connection(), { bucket: 'bound', ttlMs: 5_000 })
      const again = await KvIdempotencyStore.open(await connection(), { bucket: 'bound', ttlMs: 5_000 })
      expect(again.name).toBe('kv:bound')
      await expect(KvIdempotencyStore.open(await connection(), { bucket: 'bound', ttlMs: 9_000 })).rejects.toThrow(
        'Expected `options.ttlMs` to be the max age of the existing bucket `bound` (5000 ms), got `9000` (number)',
      )
    })

    it('refuses a bucket name NATS would refuse and a ttlMs that is not a positive integer', async () => {
      const nc = await connection()
      await expect(KvIdempotencyStore.open(nc, { bucket: 'a.b', ttlMs: 1_000 })).rejects.toMatchObject({
        code: 'ERR_FLOWING_INVALID_ARGUMENT',
        argument: 'options.bucket',
      })
      await expect(KvIdempotencyStore.open(nc, { bucket: 'ok', ttlMs: 0 })).rejects.toMatchObject({
        argument: 'options.ttlMs',
      })
    })
  })

  describe('claim()', () => {
    it('wins an absent key: undefined, the key processing under the expected owner', async () => {
      const [a, , kv] = await two()
      a.expect('k', 'm1')
      expect(await a.claim('k', 1, true)).toBeUndefined()
      expect(a.holds('k')).toBe(true)
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'processing', owner: 'm1' })
    })

    it('answers a done key with its checkpoint (a duplicate), in another process too', async () => {
      const [a, b] = await two()
      await a.claim('k', 1, true)
      await a.set('k', { state: 'done', checkpoint: { charged: 42 } }, 1)
      expect(a.holds('k')).toBe(false)
      expect(await b.claim('k', 1, true)).toEqual({ state: 'done', checkpoint: { charged: 42 } })
      expect(await a.claim('k', 1, true)).toEqual({ state: 'done', checkpoint: { charged: 42 } })
    })

    it('re-claims a failed key when reclaimFailed, and answers it otherwise', async () => {
      const [a, b, kv] = await two()
      await a.claim('k', 1, true)
      await a.set('k', { state: 'failed' }, 1)
      expect(await b.claim('k', 1, false)).toEqual({ state: 'failed' })
      b.expect('k', 'm2')
      expect(await b.claim('k', 1, true)).toBeUndefined()
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'processing', owner: 'm2' })
      await b.set('k', { state: 'done' }, 1)
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'done', owner: 'm2' })
    })

    it('takes over a key of the expected owner at once (a redelivery) and fences the former holder', async () => {
      const [a, b, kv] = await two()
      a.expect('k', 'm1')
      await a.claim('k', 1, true)
      await a.set('k', { state: 'committed', checkpoint: 'cp' }, 1)
      const before = (await raw(kv, 'k'))?.revision as number
      b.expect('k', 'm1') // the same message, redelivered to another process
      expect(await b.claim('k', 1, true)).toEqual({ state: 'committed', checkpoint: 'cp' })
      const after = await raw(kv, 'k')
      expect(after?.revision).toBeGreaterThan(before) // taken over by a write, before b writes anything
      expect(after?.value).toEqual({ state: 'committed', checkpoint: 'cp', owner: 'm1' })
      await expect(a.set('k', { state: 'done' }, 1)).rejects.toBeInstanceOf(LedgerFencedError)
      expect(a.holds('k')).toBe(false)
      await b.set('k', { state: 'done', checkpoint: 'cp' }, 1)
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'done', checkpoint: 'cp', owner: 'm1' })
    })

    it('answers done for a key in flight under another owner (the restore path skips it), taking nothing', async () => {
      const [a, b, kv] = await two()
      a.expect('k', 'm1')
      await a.claim('k', 1, true)
      const revision = (await raw(kv, 'k'))?.revision
      b.expect('k', 'm2')
      expect(await b.claim('k', 1, true)).toEqual({ state: 'done' })
      expect((await raw(kv, 'k'))?.revision).toBe(revision)
      await a.set('k', { state: 'done' }, 1) // a still holds it
    })

    it('answers a key in flight as found when nothing is expected for it (a plain loop refuses the duplicate)', async () => {
      const [a, b] = await two()
      a.expect('k', 'm1')
      await a.claim('k', 1, true)
      await a.set('k', { state: 'committed', checkpoint: 7 }, 1)
      expect(await b.claim('k', 1, true)).toEqual({ state: 'committed', checkpoint: 7 })
      expect(b.holds('k')).toBe(false)
      await a.set('k', { state: 'done' }, 1)
    })

    it('lets one of eight concurrent claimers on eight connections win', async () => {
      const { stores } = await processes(8)
      const answers = await Promise.all(stores.map((s) => s.claim('k', 1, true)))
      expect(answers.filter((x) => x === undefined)).toHaveLength(1)
      expect(answers.filter((x) => x?.state === 'processing')).toHaveLength(7)
      expect(stores.filter((s) => s.holds('k'))).toHaveLength(1)
    })

    it('lets concurrent redeliveries of one message take a key over in turn, the last one holding it', async () => {
      // Four: a claimer loses at most one round per rival, within CLAIM_ATTEMPTS.
      const { stores } = await processes(5)
      const [first, ...others] = stores as [KvIdempotencyStore, ...KvIdempotencyStore[]]
      first.expect('k', 'm1')
      await first.claim('k', 1, true)
      for (const s of others) s.expect('k', 'm1')
      const answers = await Promise.all(others.map((s) => s.claim('k', 1, true)))
      // Each takes it over in turn (the latest wins the fence); all see the leftover.
      expect(answers).toEqual(others.map(() => ({ state: 'processing' })))
      const writes = await Promise.allSettled(stores.map((s) => s.set('k', { state: 'done' }, 1)))
      expect(writes.filter((w) => w.status === 'fulfilled')).toHaveLength(1)
    })

    it('treats delete and purge tombstones as absent', async () => {
      const [a, b, kv] = await two()
      await a.claim('k', 1, true)
      await a.release('k')
      expect((await raw(kv, 'k'))?.operation).toBe('DEL')
      expect(await a.peek('k')).toBeUndefined()
      expect(await b.claim('k', 1, true)).toBeUndefined()
      await kv.purge('k')
      expect((await raw(kv, 'k'))?.operation).toBe('PURGE')
      expect(await a.claim('k', 1, true)).toBeUndefined()
      await expect(b.set('k', { state: 'done' }, 1)).rejects.toBeInstanceOf(LedgerFencedError)
    })

    it('stores any idempotency key, escaping what KV keys cannot hold', async () => {
      const [a, , kv] = await two()
      for (const key of ['order 42.x=ü', '', '.', 'a/b-c_D9']) {
        expect(await a.claim(key, 1, true)).toBeUndefined()
        await a.set(key, { state: 'done', checkpoint: key }, 1)
        expect(await a.peek(key)).toEqual({ state: 'done', checkpoint: key })
      }
      expect((await raw(kv, 'order=2042=2Ex=3D=C3=BC'))?.value).toMatchObject({ checkpoint: 'order 42.x=ü' })
      expect((await raw(kv, 'a/b-c_D9'))?.value).toMatchObject({ checkpoint: 'a/b-c_D9' })
    })
  })

  describe('claim() against a rival that always wins', () => {
    it('gives up after CLAIM_ATTEMPTS lost races with a LedgerContendedError', async () => {
      const [, , kv] = await two()
      const rival = await new Kvm(await connection()).open((await kv.status()).bucket)
      await rival.put('k', JSON.stringify({ state: 'failed' }))
      let rounds = 0
      // The store's bucket, with a rival writing the key just before each of the store's writes.
      const contended = new Proxy(kv, {
        get(target, property, receiver) {
          if (property !== 'update') return Reflect.get(target, property, receiver)
          return async (...args: Parameters<KV['update']>) => {
            rounds++
            await rival.put('k', JSON.stringify({ state: 'failed' }))
            return target.update(...args)
          }
        },
      })
      const store = await KvIdempotencyStore.bind(contended)
      const error = await store.claim('k', 1, true).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(LedgerContendedError)
      expect(error).toMatchObject({ code: 'ERR_FLOWING_LEDGER_CONTENDED', key: 'k', attempts: CLAIM_ATTEMPTS })
      expect((error as Error).message).toBe(
        `Claiming idempotency key \`k\` in NATS KV bucket \`${store.bucket}\` lost the compare-and-set race ${CLAIM_ATTEMPTS} times in a row: others keep rewriting it`,
      )
      expect(rounds).toBe(CLAIM_ATTEMPTS)
      expect(store.holds('k')).toBe(false)
    })
  })

  describe('set()', () => {
    it('serializes the writes of one key (committed then done, not awaited in between)', async () => {
      const [a, , kv] = await two()
      await a.claim('k', 1, true)
      const writes = [
        a.set('k', { state: 'committed', checkpoint: 1 }, 1),
        a.set('k', { state: 'done', checkpoint: 1 }, 1),
      ]
      await Promise.all(writes)
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'done', checkpoint: 1 })
    })

    it('refuses a key this store does not hold (never claimed, finished, or forgotten)', async () => {
      const [a] = await two()
      await expect(a.set('never', { state: 'done' }, 1)).rejects.toThrow(
        'does not hold it (never claimed, already finished, or forgotten)',
      )
      a.expect('k', 'm1')
      await a.claim('k', 1, true)
      a.forget('k')
      expect(a.holds('k')).toBe(false)
      await expect(a.set('k', { state: 'done' }, 1)).rejects.toBeInstanceOf(LedgerFencedError)
    })

    it('still writes what was asked before forget() (the end of a message, then its forget)', async () => {
      const [a, , kv] = await two()
      a.expect('k', 'm1')
      await a.claim('k', 1, true)
      const done = a.set('k', { state: 'done' }, 1)
      a.forget('k')
      await done
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'done', owner: 'm1' })
    })
  })

  describe('release()', () => {
    it('deletes a held key by compare-and-set, is a no-op for one not held, and is fenced after a takeover', async () => {
      const [a, b, kv] = await two()
      await a.release('never') // not held: nothing to do
      a.expect('k', 'm1')
      await a.claim('k', 1, true)
      b.expect('k', 'm1')
      await b.claim('k', 1, true)
      await expect(a.release('k')).rejects.toBeInstanceOf(LedgerFencedError)
      expect((await raw(kv, 'k'))?.value).toEqual({ state: 'processing', owner: 'm1' })
      await b.release('k')
      expect((await raw(kv, 'k'))?.operation).toBe('DEL')
    })
  })

  describe('peek()', () => {
    it('reads an entry without claiming it or writing', async () => {
      const [a, b, kv] = await two()
      expect(await b.peek('k')).toBeUndefined()
      await a.claim('k', 1, true)
      await a.set('k', { state: 'committed', checkpoint: [1, 2] }, 1)
      const revision = (await raw(kv, 'k'))?.revision
      expect(await b.peek('k')).toEqual({ state: 'committed', checkpoint: [1, 2] })
      expect(b.holds('k')).toBe(false)
      expect((await raw(kv, 'k'))?.revision).toBe(revision)
    })
  })

  describe('expiry', () => {
    it('is bucket-level: a key goes ttlMs after its last write, whatever ttlMs the loop passes (real time)', async () => {
      const [a, b] = await two(1_000)
      await a.claim('k', 86_400_000, true)
      await a.set('k', { state: 'done' }, 86_400_000)
      expect(await b.peek('k')).toEqual({ state: 'done' })
      await vi.waitFor(async () => expect(await b.peek('k')).toBeUndefined(), { timeout: 5_000, interval: 100 })
      expect(await b.claim('k', 1, true)).toBeUndefined()
    })
  })

  describe('LedgerEntryError', () => {
    it('is what a read of a value the store did not write throws: code, key, bucket, cause', async () => {
      const [a, , kv] = await two()
      await kv.put('order-7', 'not json')
      const peeked = await a.peek('order-7').catch((e: unknown) => e)
      expect(peeked).toBeInstanceOf(LedgerEntryError)
      expect(peeked).toBeInstanceOf(FlowingError)
      expect(peeked).toMatchObject({ code: 'ERR_FLOWING_LEDGER_ENTRY', key: 'order-7', bucket: a.bucket })
      expect((peeked as Error).message).toMatch(
        new RegExp(
          `^NATS KV bucket \`${a.bucket}\` holds no ledger entry under \`order-7\`: the value is not JSON \\(.+\\)$`,
        ),
      )
      expect((peeked as Error).cause).toBeInstanceOf(Error)
      await expect(a.claim('order-7', 1, true)).rejects.toBeInstanceOf(LedgerEntryError)
    })
  })

  describe('LedgerFencedError', () => {
    it('is a FlowingError with code ERR_FLOWING_LEDGER_FENCED, the key, and a message naming key and bucket', async () => {
      const [a, b] = await two()
      a.expect('order-42', 'm1')
      await a.claim('order-42', 1, true)
      b.expect('order-42', 'm1')
      await b.claim('order-42', 1, true)
      const error = await a.set('order-42', { state: 'done' }, 1).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(LedgerFencedError)
      expect(error).toBeInstanceOf(FlowingError)
      expect(error).toMatchObject({ name: 'LedgerFencedError', code: 'ERR_FLOWING_LEDGER_FENCED', key: 'order-42' })
      expect((error as LedgerFencedError).bucket).toBe(a.bucket)
      expect((error as Error).message).toMatch(
        new RegExp(
          `^Idempotency key \`order-42\` in NATS KV bucket \`${a.bucket}\` was taken over by another process \\(the revision this store wrote, \\d+, is no longer the latest\\): this write is fenced off$`,
        ),
      )
      expect((error as Error).cause).toBeDefined()
    })
  })

  describe('the fence (property)', () => {
    type Op =
      | { readonly kind: 'expect'; readonly store: 0 | 1; readonly key: string; readonly owner: string }
      | { readonly kind: 'claim'; readonly store: 0 | 1; readonly key: string; readonly reclaim: boolean }
      | { readonly kind: 'set'; readonly store: 0 | 1; readonly key: string; readonly entry: LedgerEntry }
      | { readonly kind: 'release' | 'forget'; readonly store: 0 | 1; readonly key: string }
    const store = fc.constantFrom<0 | 1>(0, 1)
    const key = fc.constantFrom('a', 'b', 'c')
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('expect' as const), store, key, owner: fc.constantFrom('m1', 'm2') }),
      fc.record({ kind: fc.constant('claim' as const), store, key, reclaim: fc.boolean() }),
      fc.record({
        kind: fc.constant('set' as const),
        store,
        key,
        entry: fc.constantFrom<LedgerEntry>(
          { state: 'committed', checkpoint: 1 },
          { state: 'done' },
          { state: 'failed' },
        ),
      }),
      fc.record({ kind: fc.constantFrom('release' as const, 'forget' as const), store, key }),
    )

    // Runs `o`; for a set or a release, returns whether it went through (not fenced).
    async function run(stores: readonly KvIdempotencyStore[], o: Op): Promise<boolean> {
      const s = stores[o.store] as KvIdempotencyStore
      if (o.kind === 'expect') s.expect(o.key, o.owner)
      else if (o.kind === 'forget') s.forget(o.key)
      else if (o.kind === 'claim') await s.claim(o.key, 1, o.reclaim)
      else {
        const held = s.holds(o.key)
        try {
          await (o.kind === 'set' ? s.set(o.key, o.entry, 1) : s.release(o.key))
          return held
        } catch (error) {
          if (!(error instanceof LedgerFencedError)) throw error
        }
      }
      return false
    }

    it('never lets a store write a key another store wrote since its own last write', async () => {
      const [ncA, ncB, ncRaw] = [await connection(), await connection(), await connection()]
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 24 }), async (ops) => {
          const bucket = `fence-${++buckets}`
          const stores = [
            await KvIdempotencyStore.open(ncA, { bucket, ttlMs: 60_000 }),
            await KvIdempotencyStore.open(ncB, { bucket, ttlMs: 60_000 }),
          ]
          const kv = await new Kvm(ncRaw).open(bucket)
          const lastWriter = new Map<string, number>()
          for (const o of ops) {
            const before = (await raw(kv, o.key))?.revision
            const succeeded = await run(stores, o)
            const wrote = (await raw(kv, o.key))?.revision !== before
            if (o.kind === 'set' || o.kind === 'release') {
              // The fence: a set or a release goes through only as the key's last writer.
              expect(wrote).toBe(succeeded)
              if (succeeded) expect(lastWriter.get(o.key)).toBe(o.store)
            }
            if (o.kind === 'claim' && wrote) expect(stores[o.store]?.holds(o.key)).toBe(true) // won or took over
            if (wrote) lastWriter.set(o.key, o.store)
          }
          // Whoever thinks it holds a key: of two writes at once, at most one goes through.
          for (const k of ['a', 'b', 'c']) {
            const writes = await Promise.allSettled(stores.map((s) => s.set(k, { state: 'committed' }, 1)))
            expect(writes.filter((w) => w.status === 'fulfilled').length).toBeLessThanOrEqual(1)
          }
        }),
        { numRuns: 40 },
      )
    })
  })
})
