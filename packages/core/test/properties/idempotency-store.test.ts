/**
 * The bounded in-memory ledger against reference models, on random sequences with a small `maxKeys`
 * and short TTLs on a VirtualClock:
 *
 * - `MemoryIdempotencyStore` (one `Map` and an intrusive recency list) against a model that keeps its
 *   keys in plain arrays, in recency order, and evicts by `shift()`: the same answers to every call,
 *   the same `size` and `evicted` after each, the same keys left at the end, and never more keys than
 *   `maxKeys` unless in-flight keys alone exceed it (they are never evicted).
 * - The loop's ledger on the store it makes itself (held marks in the store's slots, one lookup a
 *   call) against the same ledger given an explicit `MemoryIdempotencyStore` (held keys in sets of
 *   its own): the same answers to posts, restores and `holds`, and the same store contents.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Idempotency } from '../../src/idempotency/ledger.js'
import { type LedgerEntry, type LedgerState, MemoryIdempotencyStore, VirtualClock } from '../../src/index.js'
import type { Envelope } from '../../src/internal/envelope.js'
import { PostExtras } from '../../src/internal/post-extras.js'
import { PROPERTY_TIMEOUT_MS } from './harness.js'

const PROCESSING: LedgerEntry = { state: 'processing' }

interface ModelSlot {
  readonly key: string
  readonly entry: LedgerEntry
  readonly expiresAt: number
}

/** The store as specified, in the plainest terms: arrays, linear searches, `shift()` to evict. */
class ModelStore {
  readonly inFlight: ModelSlot[] = []
  // Least recently used first.
  readonly finished: ModelSlot[] = []
  evicted = 0

  constructor(
    readonly maxKeys: number,
    readonly clock: VirtualClock,
  ) {}

  get size(): number {
    return this.inFlight.length + this.finished.length
  }

  get(key: string): LedgerEntry | undefined {
    const slot = this.#take(key)
    if (slot === undefined || slot.expiresAt <= this.clock.now()) return undefined
    this.#put(slot)
    return slot.entry
  }

  claim(key: string, ttlMs: number, reclaimFailed: boolean): LedgerEntry | undefined {
    const found = this.get(key)
    if (found !== undefined && !(found.state === 'failed' && reclaimFailed)) return found
    this.set(key, PROCESSING, ttlMs)
    return undefined
  }

  set(key: string, entry: LedgerEntry, ttlMs: number): void {
    this.#take(key)
    this.#put({ key, entry, expiresAt: this.clock.now() + ttlMs })
    if (this.size > this.maxKeys && this.finished.length > 0) {
      this.finished.shift()
      this.evicted++
    }
  }

  release(key: string): void {
    this.#take(key)
  }

  #take(key: string): ModelSlot | undefined {
    for (const list of [this.inFlight, this.finished]) {
      const i = list.findIndex((s) => s.key === key)
      if (i >= 0) return list.splice(i, 1)[0]
    }
    return undefined
  }

  #put(slot: ModelSlot): void {
    const state = slot.entry.state
    ;(state === 'done' || state === 'failed' ? this.finished : this.inFlight).push(slot)
  }
}

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f']
const keyArb = fc.constantFrom(...KEYS)
const ttlArb = fc.constantFrom(1, 3, 10, 1_000)
const stateArb = fc.constantFrom<LedgerState>('processing', 'committed', 'done', 'failed')

type StoreOp =
  | { readonly op: 'claim'; readonly key: string; readonly ttl: number; readonly reclaim: boolean }
  | {
      readonly op: 'set'
      readonly key: string
      readonly state: LedgerState
      readonly ttl: number
      readonly cp: boolean
    }
  | { readonly op: 'release'; readonly key: string }
  | { readonly op: 'get'; readonly key: string }
  | { readonly op: 'advance'; readonly ms: number }

const storeOpArb: fc.Arbitrary<StoreOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('claim' as const), key: keyArb, ttl: ttlArb, reclaim: fc.boolean() }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('set' as const),
      key: keyArb,
      state: stateArb,
      ttl: ttlArb,
      cp: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('release' as const), key: keyArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('get' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 6 }) }) },
)

// One call on the store or the model (they share the clock); what it answered.
async function apply(s: ModelStore | MemoryIdempotencyStore, o: StoreOp, clock: VirtualClock): Promise<unknown> {
  switch (o.op) {
    case 'claim':
      return s.claim(o.key, o.ttl, o.reclaim)
    case 'set':
      return s.set(o.key, o.cp ? { state: o.state, checkpoint: { at: clock.now() } } : { state: o.state }, o.ttl)
    case 'release':
      return s.release(o.key)
    case 'get':
      return s.get(o.key)
    case 'advance':
      return clock.advance(o.ms)
  }
}

async function storeScenario(maxKeys: number, ops: readonly StoreOp[]): Promise<void> {
  const clock = new VirtualClock()
  const store = new MemoryIdempotencyStore(maxKeys, clock)
  const model = new ModelStore(maxKeys, clock)
  for (const [i, o] of ops.entries()) {
    const got = await apply(store, o, clock)
    const want = o.op === 'advance' ? undefined : await apply(model, o, clock)
    const at = `step ${i} ${JSON.stringify(o)}`
    expect(got, at).toEqual(want)
    expect([store.size, store.evicted], at).toEqual([model.size, model.evicted])
    expect(store.size, at).toBeLessThanOrEqual(Math.max(maxKeys, model.inFlight.length))
  }
  // The same keys are left, with the same entries (probed in one order on both: the touches match).
  expect(KEYS.map((k) => store.get(k))).toEqual(KEYS.map((k) => model.get(k)))
}

type LedgerOp =
  | { readonly op: 'post'; readonly key: string; readonly stamped: boolean }
  | {
      readonly op: 'end'
      readonly pick: number
      readonly how: 'done' | 'failed' | 'released'
      readonly stamped: boolean
    }
  | { readonly op: 'commit'; readonly pick: number }
  | { readonly op: 'handBack'; readonly pick: number }
  | { readonly op: 'restore'; readonly key: string; readonly cp: boolean; readonly undo: boolean }
  | { readonly op: 'advance'; readonly ms: number }

const pickArb = fc.nat({ max: 20 })
const ledgerOpArb: fc.Arbitrary<LedgerOp> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('post' as const), key: keyArb, stamped: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('end' as const),
      pick: pickArb,
      how: fc.constantFrom('done' as const, 'failed' as const, 'released' as const),
      stamped: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('commit' as const), pick: pickArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('handBack' as const), pick: pickArb }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('restore' as const), key: keyArb, cp: fc.boolean(), undo: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 6 }) }) },
)

/** One ledger with the extras it reads keys from, and its messages in flight. */
class Side {
  readonly extras = new PostExtras()
  readonly ledger: Idempotency
  readonly inFlight: Envelope[] = []
  #seq = 0

  constructor(
    readonly store: MemoryIdempotencyStore | undefined,
    options: { maxKeys: number; ttlMs: number; failed: 'retry' | 'duplicate' },
    clock: VirtualClock,
  ) {
    const errors = (error: unknown) => {
      throw error
    }
    this.ledger = new Idempotency(store === undefined ? options : { ...options, store }, clock, this.extras, errors)
  }

  message(key: string, checkpoint?: unknown): Envelope {
    const m = { id: `m:${++this.#seq}`, seq: this.#seq } as unknown as Envelope
    this.extras.keep(m, { idempotencyKey: key })
    if (checkpoint !== undefined) this.extras.commit(m, checkpoint)
    return m
  }

  // One step; what the ledger answered (messages are picked by position, the same on both sides).
  step(o: LedgerOp, now: number): unknown {
    const pick = (i: number) => this.inFlight.splice(i % this.inFlight.length, 1)[0] as Envelope
    switch (o.op) {
      case 'post': {
        const m = this.message(o.key)
        const holder = this.ledger.claim(o.key, o.stamped ? now : undefined, m)
        if (holder === undefined) this.inFlight.push(m)
        return holder
      }
      case 'end':
        return this.inFlight.length > 0 && this.ledger.ended(pick(o.pick), o.how, o.stamped ? now : undefined)
      case 'commit': {
        const m = this.inFlight[o.pick % Math.max(1, this.inFlight.length)]
        if (m !== undefined) this.extras.commit(m, { n: now })
        return m !== undefined && this.ledger.committed(m, { n: now })
      }
      case 'handBack':
        return this.inFlight.length > 0 && this.ledger.handedBack(pick(o.pick))
      case 'restore':
        return this.#restore(o)
      case 'advance':
        return undefined
    }
  }

  #restore(o: Extract<LedgerOp, { op: 'restore' }>): unknown {
    if (this.ledger.holds(o.key)) return 'held' // the loop refuses such a snapshot before asking the ledger
    const ok = this.ledger.restore(o.key, o.cp ? 'charged' : undefined)
    if (ok && o.undo) this.ledger.unrestore(o.key)
    else if (ok) this.inFlight.push(this.message(o.key, o.cp ? 'charged' : undefined))
    this.ledger.restored()
    return ok
  }
}

async function ledgerScenario(
  setup: { maxKeys: number; ttlMs: number; failed: 'retry' | 'duplicate' },
  ops: readonly LedgerOp[],
): Promise<void> {
  const clock = new VirtualClock()
  const given = new MemoryIdempotencyStore(setup.maxKeys, clock)
  const own = new Side(undefined, setup, clock)
  const generic = new Side(given, setup, clock)
  const ownStore = own.ledger.store as MemoryIdempotencyStore
  for (const [i, o] of ops.entries()) {
    if (o.op === 'advance') await clock.advance(o.ms)
    const at = `step ${i} ${JSON.stringify(o)}`
    expect(own.step(o, clock.now()), at).toEqual(generic.step(o, clock.now()))
    expect(
      KEYS.map((k) => own.ledger.holds(k)),
      at,
    ).toEqual(KEYS.map((k) => generic.ledger.holds(k)))
    expect([ownStore.size, ownStore.evicted], at).toEqual([given.size, given.evicted])
  }
  expect(KEYS.map((k) => ownStore.get(k))).toEqual(KEYS.map((k) => given.get(k)))
}

describe('the in-memory idempotency ledger (differential)', () => {
  it('MemoryIdempotencyStore answers, evicts and holds exactly what the array model does, within its bound', {
    timeout: PROPERTY_TIMEOUT_MS,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(storeOpArb, { minLength: 10, maxLength: 100, size: 'max' }),
        storeScenario,
      ),
      { numRuns: 400 },
    )
  })

  it('the ledger on its own store behaves as on a given MemoryIdempotencyStore', {
    timeout: PROPERTY_TIMEOUT_MS,
  }, async () => {
    const setupArb = fc.record({
      maxKeys: fc.integer({ min: 1, max: 4 }),
      ttlMs: fc.constantFrom(2, 5, 1_000),
      failed: fc.constantFrom('retry' as const, 'duplicate' as const),
    })
    await fc.assert(
      fc.asyncProperty(setupArb, fc.array(ledgerOpArb, { minLength: 10, maxLength: 100, size: 'max' }), ledgerScenario),
      { numRuns: 300 },
    )
  })
})
