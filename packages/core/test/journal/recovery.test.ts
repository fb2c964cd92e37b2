/**
 * A journaled loop recovering at `start()`: a full queue plus what its workers were running comes back
 * under the same options, a fixed `idPrefix` gets a per-process suffix so no id repeats, and a row that
 * cannot be read is a `StoreError`.
 */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  MemoryStore,
  NonRetryableError,
  type Store,
  type StoreContents,
  StoreError,
  VirtualClock,
} from '../../src/index.js'
import { thrown } from '../fixtures.js'
import { type Jobs, loopOn, settle } from './journal-fixtures.js'

describe('a journaled loop recovering at start()', () => {
  it('recovers a full queue plus the messages its workers were running, with the same options', async () => {
    const store = new MemoryStore()
    const clock = new VirtualClock()
    const loop = createLoop<Jobs>({ clock, logger: false, store, capacity: 4, workers: 2 })
    loop.on('job', () => clock.sleep(60_000))
    loop.start()
    for (let i = 0; i < 4; i++) loop.post('job', { n: `${i}` })
    await settle(clock) // two run, two wait
    for (let i = 4; i < 6; i++) loop.post('job', { n: `${i}` }) // the queue is full again
    await settle(clock)
    await loop.flushed()
    const loop2 = createLoop<Jobs>({
      clock: new VirtualClock(),
      logger: false,
      store: store.reopen(),
      capacity: 4,
      workers: 2,
    })
    loop2.on('job', () => {})
    loop2.start()
    expect(loop2.metrics().counters.restored).toBe(6)
  })

  it('gives a fixed idPrefix a per-process suffix: no id, dead letter or dedupe key repeats', async () => {
    const store = new MemoryStore()
    const first = loopOn(store, new VirtualClock(), { idPrefix: 'orders', idempotency: { dedupe: 'id' } })
    first.loop.on('job', () => {
      throw new NonRetryableError('declined')
    })
    first.loop.start()
    const a = first.loop.post('job', { n: 'first' })
    await settle(first.clock)
    await first.loop.stop()
    const second = loopOn(store.reopen(), new VirtualClock(), { idPrefix: 'orders', idempotency: { dedupe: 'id' } })
    second.loop.on('job', () => {})
    second.loop.start()
    const b = second.loop.tryPost('job', { n: 'second' })
    expect(b.ok).toBe(true)
    expect((b as { message: { id: string } }).message.id).not.toBe(a.id)
    expect(a.id).toMatch(/^orders\.[\w-]{6}:1$/)
    expect(second.loop.deadLetters.list().map((l) => l.payload)).toEqual([{ n: 'first' }])
  })

  it('fails start() with a StoreError, not a SyntaxError, on a row whose payload is not JSON', () => {
    const inner = new MemoryStore()
    const contents: StoreContents = {
      messages: [
        {
          id: 'x:1',
          type: 'job',
          payloadJson: '{"n":',
          priority: 5,
          traceId: 'x:1',
          hops: 0,
          state: 'queued',
          attempts: [],
        },
      ],
      deadLetters: [],
      keys: [],
    }
    const store: Store = { name: 'torn', recovered: () => contents, commit: (b) => inner.commit(b), close: () => {} }
    const { loop } = loopOn(store)
    loop.on('job', () => {})
    const error = thrown(() => loop.start())
    expect(error).toBeInstanceOf(StoreError)
    expect(error.message).toMatch(/^Journal store torn failed to recover: a journaled payload is not JSON/)
  })
})
