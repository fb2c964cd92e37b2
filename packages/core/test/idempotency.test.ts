import { describe, expect, it } from 'vitest'
import {
  createLoop,
  DuplicateMessageError,
  FencedError,
  type IdempotencyStore,
  InvalidArgumentError,
  type LedgerEntry,
  MemoryIdempotencyStore,
  NonRetryableError,
  RetryableError,
  VirtualClock,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('idempotency', () => {
  it('refuses a key in flight or done: tryPost answers duplicate, post throws, nothing runs twice', async () => {
    const { loop, clock } = virtualLoop()
    const effects: number[] = []
    loop.on('work', async (m) => {
      await clock.sleep(10)
      effects.push(m.payload)
    })
    const events: string[] = []
    loop.events.on('duplicate', (type, key, state) => events.push(`${type} ${key} ${state}`))
    loop.post('work', 1, { idempotencyKey: 'pay-1' })
    const inFlight = loop.tryPost('work', 2, { idempotencyKey: 'pay-1' })
    expect(inFlight).toMatchObject({ ok: false, status: 'duplicate' })
    await clock.run()
    const done = thrown(() => loop.post('work', 3, { idempotencyKey: 'pay-1' }))
    expect(done).toBeInstanceOf(DuplicateMessageError)
    expect(done).toMatchObject({ code: 'ERR_FLOWING_DUPLICATE', idempotencyKey: 'pay-1', ledgerState: 'done' })
    expect(done.message).toBe('Duplicate `work`: idempotency key "pay-1" is done; nothing was admitted')
    await clock.run()
    expect(effects).toEqual([1])
    expect(events).toEqual(['work pay-1 processing', 'work pay-1 done'])
    expect(loop.metrics().counters).toMatchObject({ posted: 3, accepted: 1, rejected: 2, duplicates: 2 })
  })

  it('follows the failed-key policy: retry (default) runs a dead-lettered key again, duplicate refuses it', async () => {
    for (const [failed, expected] of [
      ['retry', 'queued'],
      ['duplicate', 'duplicate'],
    ] as const) {
      const { loop, clock } = virtualLoop({ idempotency: { failed } })
      loop.on('work', () => {
        throw new NonRetryableError('declined')
      })
      loop.post('work', 1, { idempotencyKey: 'k' })
      await clock.run()
      expect(loop.tryPost('work', 1, { idempotencyKey: 'k' }).status).toBe(expected)
    }
  })

  it('frees the key of a message that will not run: refused when full, dropped, cancelled', async () => {
    const { loop, clock } = virtualLoop({ capacity: 1, autoStart: false })
    loop.on('work', () => {})
    loop.post('work', 1)
    expect(loop.tryPost('work', 2, { idempotencyKey: 'a' }).status).toBe('full')
    expect(loop.tryPost('work', 2, { idempotencyKey: 'a', overflow: 'drop-new' }).status).toBe('dropped')
    const delayed = loop.postDelayed('work', 3, 100, { idempotencyKey: 'b' })
    delayed.cancel()
    loop.start()
    await clock.run()
    expect(loop.tryPost('work', 2, { idempotencyKey: 'a' }).status).toBe('queued')
    await clock.run()
    expect(loop.tryPost('work', 3, { idempotencyKey: 'b' }).status).toBe('queued')
    await clock.run()
    expect(loop.sideTableSize).toBe(0) // refused, dropped, cancelled and done messages freed their entries
  })

  it('forgets keys after ttlMs; the memory store evicts the least recently used finished key past maxKeys', async () => {
    const { loop, clock } = virtualLoop({ idempotency: { ttlMs: 1000 } })
    let runs = 0
    loop.on('work', () => {
      runs++
    })
    loop.post('work', 1, { idempotencyKey: 'x' })
    await clock.advance(999)
    expect(loop.tryPost('work', 1, { idempotencyKey: 'x' }).status).toBe('duplicate')
    await clock.advance(1)
    expect(loop.tryPost('work', 1, { idempotencyKey: 'x' }).status).toBe('queued')
    await clock.run()
    expect(runs).toBe(2)

    const store = new MemoryIdempotencyStore(3, new VirtualClock()) // 3 keys, in flight or finished
    expect(store.claim('in-flight', 1e9, true)).toBeUndefined()
    store.set('a', { state: 'done' }, 1e9)
    store.set('b', { state: 'done' }, 1e9)
    store.get('a') // touch: b is now the least recently used
    store.set('c', { state: 'done' }, 1e9)
    expect([store.get('in-flight')?.state, store.get('a')?.state, store.get('b'), store.get('c')?.state]).toEqual([
      'processing',
      'done',
      undefined,
      'done',
    ])
    expect(store.evicted).toBe(1)
  })

  it("dedupe: 'id' uses the message id when no key is given", async () => {
    const { loop, clock } = virtualLoop({ idempotency: { dedupe: 'id' }, autoStart: false })
    loop.on('work', () => {})
    const m = loop.post('work', 1)
    expect(loop.tryPost('work', 2, { idempotencyKey: m.id }).status).toBe('duplicate')
    loop.start()
    await clock.run()
  })

  it('with an async store, claims before the first attempt and drops a duplicate found then', async () => {
    const entries = new Map<string, LedgerEntry>([['taken', { state: 'done' }]])
    const calls: string[] = []
    const store: IdempotencyStore = {
      claim: async (key) => {
        calls.push(`claim ${key}`)
        const found = entries.get(key)
        if (found === undefined) entries.set(key, { state: 'processing' })
        return found
      },
      set: async (key, entry) => {
        calls.push(`set ${key} ${entry.state}`)
        entries.set(key, entry)
      },
      release: async (key) => {
        calls.push(`release ${key}`)
        entries.delete(key)
      },
    }
    const { loop, clock } = virtualLoop({ idempotency: { store } })
    const runs: number[] = []
    loop.on('work', (m) => {
      runs.push(m.payload)
    })
    const dropped: string[] = []
    loop.events.on('dropped', (m, reason) => dropped.push(`${m.payload} ${reason}`))
    loop.post('work', 1, { idempotencyKey: 'taken' }) // accepted now, found taken when it would run
    loop.post('work', 2, { idempotencyKey: 'fresh' })
    expect(loop.tryPost('work', 3, { idempotencyKey: 'fresh' }).status).toBe('duplicate') // in flight here
    await clock.run()
    expect(runs).toEqual([2])
    expect(dropped).toEqual(['1 duplicate'])
    expect(calls).toEqual(['claim taken', 'claim fresh', 'set fresh done'])
    expect(entries.get('taken')).toEqual({ state: 'done' }) // someone else's: untouched
    expect(loop.metrics().counters).toMatchObject({ accepted: 2, succeeded: 1, dropped: 1, duplicates: 1 })
  })

  it("never writes to a key it did not win: a cancelled message leaves the other owner's entry alone", async () => {
    const entries = new Map<string, LedgerEntry>([['taken', { state: 'done' }]])
    const calls: string[] = []
    const store: IdempotencyStore = {
      claim: async (key) => entries.get(key),
      set: async (key, entry) => {
        calls.push(`set ${key} ${entry.state}`)
      },
      release: async (key) => {
        calls.push(`release ${key}`)
      },
    }
    const { loop, clock } = virtualLoop({ idempotency: { store }, autoStart: false })
    loop.on('work', () => {})
    loop.post('work', 1, { idempotencyKey: 'taken' }) // accepted: the async claim is not answered yet
    loop.post('work', 2, { idempotencyKey: 'mine' })
    await loop.stop({ drain: false })
    await clock.run()
    // 'taken' was never ours: untouched. 'mine' was won after its message was cancelled: freed.
    expect(calls).toEqual(['release mine'])
    expect(entries.get('taken')).toEqual({ state: 'done' })
  })

  it('reports a failing store call as ledger-error and fails the attempt when the claim rejects', async () => {
    let fail = true
    const store: IdempotencyStore = {
      claim: () => (fail ? Promise.reject(new Error('redis down')) : Promise.resolve(undefined)),
      set: () => Promise.reject(new Error('redis down')),
      release: () => {},
    }
    const { loop, clock } = virtualLoop({
      idempotency: { store },
      retry: { maxAttempts: 2, baseMs: 5 },
      random: () => 0.5,
    })
    const runs: number[] = []
    loop.on('work', (m) => {
      runs.push(m.payload)
    })
    const errors: string[] = []
    loop.events.on('ledger-error', (error, key) => errors.push(`${key}: ${(error as Error).message}`))
    loop.events.on('failed', () => {
      fail = false
    })
    loop.post('work', 1, { idempotencyKey: 'k' })
    await clock.run()
    expect(runs).toEqual([1]) // the first attempt failed on the claim, the retry claimed and ran
    expect(errors).toEqual(['k: redis down']) // the final `set done`
  })

  it('refuses bad idempotency input with typed errors', () => {
    const { loop } = virtualLoop()
    loop.on('work', () => {})
    expect(thrown(() => loop.post('work', 1, { idempotencyKey: '' })).message).toBe(
      'Expected `options.idempotencyKey` to be a non-empty string, got `""` (string)',
    )
    expect(thrown(() => createLoop({ idempotency: { failed: 'ignore' as never } }))).toBeInstanceOf(
      InvalidArgumentError,
    )
    expect(thrown(() => createLoop({ idempotency: { store: { claim: () => undefined } as never } })).message).toContain(
      'Expected `options.idempotency.store.set` to be a function',
    )
    expect(thrown(() => createLoop({ idempotency: { ttlMs: 0 } })).message).toContain('options.idempotency.ttlMs')
  })
})

describe('commit points (succeeded but not acknowledged)', () => {
  it('a retry resumes after the commit point instead of redoing the side effect', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 10 }, random: () => 0.5 })
    const charges: string[] = []
    const receipts: string[] = []
    let receiptFails = 1
    loop.on('order.paid', (m, ctx) => {
      if (ctx.committed === undefined) {
        charges.push(m.payload.orderId)
        ctx.commit({ chargeId: `ch-${m.payload.orderId}` })
      }
      if (receiptFails-- > 0) throw new RetryableError('mail relay down')
      receipts.push(`${m.payload.orderId} ${JSON.stringify(ctx.committed)}`)
    })
    const m = loop.post('order.paid', { orderId: 'o-1', amount: 5 }, { idempotencyKey: 'o-1' })
    const committed: unknown[] = []
    loop.events.on('committed', (_m, checkpoint) => committed.push(checkpoint))
    await clock.run()
    expect(charges).toEqual(['o-1'])
    expect(receipts).toEqual(['o-1 {"chargeId":"ch-o-1"}'])
    expect(committed).toEqual([{ chargeId: 'ch-o-1' }])
    expect(loop.trace(m.id)?.transitions.map((t) => t.state)).toEqual([
      'queued',
      'running',
      'committed',
      'failed',
      'retry-scheduled',
      'queued',
      'running',
      'succeeded',
    ])
  })

  it('a dead letter keeps its key and checkpoint: its replay resumes after the commit point', async () => {
    const { loop, clock } = virtualLoop()
    const charges: string[] = []
    let mailUp = false
    loop.on('order.paid', (m, ctx) => {
      if (ctx.committed === undefined) {
        charges.push(m.payload.orderId)
        ctx.commit({ chargeId: 'ch-9' })
      }
      if (!mailUp) throw new NonRetryableError('mail relay rejected the address')
    })
    loop.post('order.paid', { orderId: 'o-9', amount: 1 }, { idempotencyKey: 'o-9' })
    await clock.run()
    const [letter] = loop.deadLetters.list()
    expect(letter).toMatchObject({ idempotencyKey: 'o-9', checkpoint: { chargeId: 'ch-9' } })
    mailUp = true
    expect(loop.deadLetters.replay().replayed).toHaveLength(1)
    await clock.run()
    expect(charges).toEqual(['o-9']) // charged once: the replay resumed after the commit point
    expect(loop.tryPost('order.paid', { orderId: 'o-9', amount: 1 }, { idempotencyKey: 'o-9' }).status).toBe(
      'duplicate',
    )
  })

  it('tells a duplicate that the key in flight has committed', async () => {
    const { loop, clock } = virtualLoop()
    loop.on('work', async (_m, ctx) => {
      ctx.commit('charged')
      await clock.sleep(10)
    })
    loop.post('work', 1, { idempotencyKey: 'k' })
    await clock.advance(1)
    const refused = loop.tryPost('work', 1, { idempotencyKey: 'k' })
    expect(refused.ok).toBe(false)
    expect((refused as unknown as { error: { ledgerState: string } }).error.ledgerState).toBe('committed')
    await clock.run()
  })

  it('fences commit() from an attempt that timed out', async () => {
    const { loop, clock } = virtualLoop({ timeoutMs: 10 })
    const errors: unknown[] = []
    loop.on('work', async (_m, ctx) => {
      await clock.sleep(50)
      try {
        ctx.commit('late')
      } catch (error) {
        errors.push(error)
      }
    })
    loop.post('work', 1)
    await clock.run()
    expect(errors[0]).toBeInstanceOf(FencedError)
  })
})
