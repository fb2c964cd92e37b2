/**
 * `loop.readmit(message)`: one message handed over from elsewhere (a broker's delivery) enters as a
 * restored one would — trace, hops, attempts, checkpoint and idempotency key continue — and comes back
 * to the caller; a done key skips it; a bad one throws `SnapshotError` and changes nothing.
 */
import { describe, expect, it } from 'vitest'
import { MemoryIdempotencyStore, SnapshotError, type SnapshotMessage, VirtualClock } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

const base: SnapshotMessage = {
  id: 'elsewhere:1',
  type: 'work',
  payload: 7,
  key: 'k',
  priority: 3,
  traceId: 'root-1',
  hops: 2,
  state: 'queued',
  attempts: [],
}

describe('readmit()', () => {
  it('returns the admitted message with its trace, hops, key and priority, and runs it', async () => {
    const { loop } = virtualLoop()
    const seen: unknown[] = []
    loop.on('work', (m, ctx) => void seen.push([m.payload, m.key, m.priority, m.traceId, m.hops, ctx.attempt]))
    const m = loop.readmit(base)
    expect(m).toMatchObject({ type: 'work', payload: 7, key: 'k', priority: 3, traceId: 'root-1', hops: 2 })
    await loop.drain()
    expect(seen).toEqual([[7, 'k', 3, 'root-1', 2, 1]])
    expect(loop.metrics().counters).toMatchObject({ accepted: 1, succeeded: 1 })
  })

  it('continues attempt counts and checkpoints', async () => {
    const { loop } = virtualLoop()
    const seen: unknown[] = []
    loop.on('work', (_m, ctx) => void seen.push([ctx.attempt, ctx.committed]))
    const failed = { attempt: 1, startedAt: 0, durationMs: 1, outcome: 'failed' as const }
    loop.readmit({ ...base, attempts: [failed], checkpoint: { charged: true } })
    await loop.drain()
    expect(seen).toEqual([[2, { charged: true }]])
  })

  it('skips a message whose idempotency key is done, and takes over one left processing', async () => {
    const clock = new VirtualClock()
    const store = new MemoryIdempotencyStore(100, clock)
    store.claim('done-key', 60_000, false)
    store.set('done-key', { state: 'done' }, 60_000)
    store.claim('left-key', 60_000, false) // a process that died while running it
    const { loop } = virtualLoop({ clock, idempotency: { store } })
    const ran: string[] = []
    loop.on('work', (m) => void ran.push(m.traceId))
    expect(loop.readmit({ ...base, traceId: 'a', idempotencyKey: 'done-key' })).toBeUndefined()
    expect(loop.readmit({ ...base, traceId: 'b', idempotencyKey: 'left-key' })).toBeDefined()
    await loop.drain()
    expect(ran).toEqual(['b'])
    expect(store.get('left-key')?.state).toBe('done')
  })

  it('throws SnapshotError for a malformed or unknown message, and admits nothing', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    const unknown = thrown(() => loop.readmit({ ...base, type: 'nope' }))
    expect(unknown).toBeInstanceOf(SnapshotError)
    expect(unknown.message).toMatch(/nope/)
    expect(thrown(() => loop.readmit({ ...base, priority: 11 as never }))).toBeInstanceOf(SnapshotError)
    expect(loop.metrics().counters.accepted).toBe(0)
  })

  it('refuses after stop()', async () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    await loop.stop()
    expect(thrown(() => loop.readmit(base)).name).toBe('LoopStoppedError')
  })
})
