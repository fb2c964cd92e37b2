/**
 * The three bounded stores that forget their oldest entry — the idempotency ledger's finished keys
 * (least recently used), finished traces (`keepTraces`), dead letters (`maxSize`): which entry goes,
 * and that going is O(1) at 100,000 entries (a `Map`'s `keys().next()` was O(deleted entries) there,
 * tens of microseconds an eviction: the timed cases below took seconds with it).
 */
import { describe, expect, it } from 'vitest'
import { DeadLetterStore } from '../src/failure/dead-letters.js'
import { Traces } from '../src/failure/trace.js'
import { type DeadLetter, MemoryIdempotencyStore, NonRetryableError, VirtualClock } from '../src/index.js'
import type { Envelope } from '../src/internal/envelope.js'
import { virtualLoop } from './fixtures.js'

const DONE = { state: 'done' } as const
const TTL = 1e9

// Whether each key is held, read through get() (which touches: call it last).
function held(store: MemoryIdempotencyStore, keys: readonly string[]): string {
  return keys.map((k) => (store.get(k) === undefined ? '-' : k)).join('')
}

// Inserts `count` entries after `fill`, and returns the ms they took.
function timed(count: number, insert: (i: number) => void, from: number): number {
  const t = performance.now()
  for (let i = from; i < from + count; i++) insert(i)
  return performance.now() - t
}

// Generous: the O(1) stores take about 0.1 s here; the O(deleted entries) ones took 5 s and more.
const EVICTIONS_BUDGET_MS = 2_500

describe('MemoryIdempotencyStore eviction order', () => {
  it('forgets the least recently used finished key: get and a refused claim touch it, a new set renews it', () => {
    const store = new MemoryIdempotencyStore(3, new VirtualClock())
    for (const k of ['a', 'b', 'c']) store.set(k, DONE, TTL)
    store.get('a') // order now b, c, a
    expect(store.claim('b', TTL, true)).toEqual(DONE) // refused: touched too — c, a, b
    store.set('d', DONE, TTL) // evicts c
    store.set('a', { state: 'failed' }, TTL) // renewed: b, d, a
    store.set('e', DONE, TTL) // evicts b
    expect(store.evicted).toBe(2)
    expect(held(store, ['a', 'b', 'c', 'd', 'e'])).toBe('a--de')
  })

  it('never evicts a key in flight: past the bound with in-flight keys alone, a key that finishes goes at once', () => {
    const store = new MemoryIdempotencyStore(2, new VirtualClock())
    for (const k of ['x', 'y', 'z']) expect(store.claim(k, TTL, true)).toBeUndefined()
    expect([store.size, store.evicted]).toEqual([3, 0])
    store.set('y', DONE, TTL) // the only finished key, over the bound: forgotten
    expect([store.size, store.evicted]).toEqual([2, 1])
    expect(held(store, ['x', 'y', 'z'])).toBe('x-z')
  })

  it('a failed key claimed again is in flight (not evictable); a released key frees its place', () => {
    const store = new MemoryIdempotencyStore(2, new VirtualClock())
    store.set('f', { state: 'failed' }, TTL)
    store.set('d', DONE, 10)
    expect(store.claim('f', TTL, true)).toBeUndefined() // in flight now
    store.set('n', DONE, TTL) // evicts d, the only finished key left
    expect(held(store, ['f', 'd', 'n'])).toBe('f-n')
    store.release('n')
    expect([store.size, store.evicted]).toEqual([1, 1])
  })

  it('an expired finished key still takes its place until it is evicted or looked up (and counts as evicted)', async () => {
    const clock = new VirtualClock()
    const store = new MemoryIdempotencyStore(2, clock)
    store.set('old', DONE, 5)
    store.set('new', DONE, TTL)
    await clock.advance(5)
    store.set('next', DONE, TTL) // evicts old, expired meanwhile
    expect([store.size, store.evicted]).toEqual([2, 1])
  })

  it('evicts in O(1) at 100,000 keys', () => {
    const store = new MemoryIdempotencyStore(100_000, new VirtualClock())
    const keys = Array.from({ length: 300_000 }, (_, i) => `k${i}`)
    for (let i = 0; i < 100_000; i++) store.set(keys[i] as string, DONE, TTL)
    const ms = timed(200_000, (i) => store.set(keys[i] as string, DONE, TTL), 100_000)
    expect(store.evicted).toBe(200_000)
    expect(store.get('k99999')).toBeUndefined()
    expect(store.get('k200000')).toEqual(DONE)
    expect(ms).toBeLessThan(EVICTIONS_BUDGET_MS)
  })
})

describe('finished traces (keepTraces) eviction order', () => {
  it('forgets the earliest finished trace, not the earliest posted, and keeps live ones', async () => {
    const { loop, clock } = virtualLoop({ traces: 'all', keepTraces: 2 })
    loop.on('work', (m) => clock.sleep(m.payload))
    const [slow, fast1, fast2, fast3] = [30, 1, 2, 3].map((ms) => loop.post('work', ms))
    await clock.advance(10) // the fast ones finished; slow is still running
    const alive = (ids: string[]) => ids.map((id) => loop.trace(id)?.state ?? '-')
    expect(alive([slow, fast1, fast2, fast3].map((m) => (m as { id: string }).id))).toEqual([
      'running',
      '-',
      'succeeded',
      'succeeded',
    ])
    await clock.run()
    expect(alive([slow, fast1, fast2, fast3].map((m) => (m as { id: string }).id))).toEqual([
      'succeeded',
      '-',
      '-',
      'succeeded',
    ])
  })

  it('retires in O(1) at 100,000 kept traces', () => {
    const traces = new Traces(true, 100_000)
    const envelopes = Array.from({ length: 300_000 }, (_, i) => ({ seq: i + 1, postedAt: 0 }) as Envelope)
    const finish = (i: number) => traces.note(envelopes[i] as Envelope, 'succeeded', 0)
    timed(100_000, finish, 0)
    const ms = timed(200_000, finish, 100_000)
    expect([traces.live, traces.find(200_000), traces.find(200_001)?.state]).toEqual([0, undefined, 'succeeded'])
    expect(ms).toBeLessThan(EVICTIONS_BUDGET_MS)
  })
})

describe('dead letters (maxSize) eviction order', () => {
  it('evicts in arrival order, whatever was replayed or purged in between', async () => {
    const { loop, clock } = virtualLoop({ deadLetters: { maxSize: 3 } })
    loop.on('work', () => {
      throw new NonRetryableError('no')
    })
    for (const i of [1, 2, 3]) loop.post('work', i)
    await clock.run()
    expect(loop.deadLetters.purge({ ids: [loop.deadLetters.list()[1]?.id as string] })).toBe(1) // 2 goes
    for (const i of [4, 5]) loop.post('work', i)
    await clock.run() // 4 fits; 5 evicts 1
    expect(loop.deadLetters.list().map((l) => l.payload)).toEqual([3, 4, 5])
    expect(loop.deadLetters.evicted).toBe(1)
  })

  it('a letter stored again under its id keeps its place', () => {
    const store = new DeadLetterStore(2, () => {
      throw new Error('not replayed here')
    })
    const letter = (id: string, payload: number) => ({ id, payload }) as unknown as DeadLetter
    store.load([letter('a', 1), letter('b', 2), letter('a', 3)])
    store.add(letter('c', 4)) // evicts a (stored first)
    expect(store.list().map((l) => [l.id, l.payload])).toEqual([
      ['b', 2],
      ['c', 4],
    ])
  })

  it('evicts in O(1) at 100,000 letters', () => {
    const store = new DeadLetterStore(100_000, () => {
      throw new Error('not replayed here')
    })
    const letters = Array.from({ length: 300_000 }, (_, i) => ({ id: `m:${i}` }) as DeadLetter)
    const add = (i: number) => store.add(letters[i] as DeadLetter)
    timed(100_000, add, 0)
    const ms = timed(200_000, add, 100_000)
    expect([store.size, store.evicted, store.get('m:199999'), store.get('m:200000')?.id]).toEqual([
      100_000,
      200_000,
      undefined,
      'm:200000',
    ])
    expect(ms).toBeLessThan(EVICTIONS_BUDGET_MS)
  })
})
