/**
 * A journaled loop before `start()` and after `stop()`: `restore()` is refused like a post, `flushed()`
 * rejects a change made after the store closed, and rows a shared store hands over are not taken.
 */
import { describe, expect, it } from 'vitest'
import { MemoryStore, NonRetryableError, type Store, type StoreContents, StoreError } from '../../src/index.js'
import { thrown } from '../fixtures.js'
import { loopOn, settle } from './journal-fixtures.js'

describe('a journaled loop outside its run', () => {
  it('refuses restore() before start() and while the store fails, like a post', () => {
    const { loop } = loopOn(new MemoryStore())
    loop.on('job', () => {})
    const snapshot = {
      format: 'flowing.snapshot',
      version: 1,
      takenAt: Date.now(),
      drained: true,
      messages: [],
    } as const
    expect(thrown(() => loop.restore(snapshot))).toBeInstanceOf(StoreError)
  })

  it('rejects flushed() for a change made after the stop closed the store', async () => {
    const store = new MemoryStore()
    const { loop, clock } = loopOn(store)
    loop.on('job', () => {
      throw new NonRetryableError('declined')
    })
    loop.start()
    loop.post('job', { n: 'x' })
    await settle(clock)
    await loop.stop()
    loop.deadLetters.purge()
    const error = await loop.flushed().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(StoreError)
    expect((error as Error).message).toMatch(/closed its store: changes made since were not committed/)
  })

  it('takes no rows over once the loop is stopping', async () => {
    let adopt: ((c: StoreContents) => void) | undefined
    const inner = new MemoryStore()
    const store: Store = {
      name: 'shared',
      recovered: () => inner.recovered(),
      commit: (b) => inner.commit(b),
      close: () => inner.close(),
      watch: (fn) => {
        adopt = fn
      },
    }
    const { loop } = loopOn(store)
    loop.on('job', () => {})
    loop.start()
    await loop.stop()
    adopt?.({
      messages: [
        {
          id: 'd:1',
          type: 'job',
          payloadJson: '{"n":"o"}',
          priority: 5,
          traceId: 'd:1',
          hops: 0,
          state: 'queued',
          attempts: [],
        },
      ],
      deadLetters: [],
      keys: [],
    })
    expect(loop.queued).toBe(0)
    expect(loop.metrics().counters.restored).toBe(0)
  })
})
