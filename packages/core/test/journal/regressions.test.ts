/** Defects a review of the journal found, one test each (each failed before its fix). */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type JournalBatch,
  type LoopOptions,
  MemoryStore,
  NonRetryableError,
  RetryableError,
  type Store,
  type StoreContents,
  StoreError,
  VirtualClock,
} from '../../src/index.js'
import { thrown } from '../fixtures.js'

interface Jobs {
  job: { n: string; total?: unknown }
}

function loopOn(store: Store, clock = new VirtualClock(), options: LoopOptions = {}) {
  const loop = createLoop<Jobs>({ clock, logger: false, store, workers: 1, ...options })
  const ran: string[] = []
  return { loop, clock, ran }
}

async function settle(clock: VirtualClock, ms = 0): Promise<void> {
  await clock.advance(ms)
  await clock.advance(0)
}

// What the store holds now (MemoryStore.recovered() reads the committed tables).
const payloads = (store: MemoryStore) =>
  store.recovered().messages.map((r) => `${(JSON.parse(r.payloadJson ?? '{}') as { n: string }).n}/${r.state}`)

describe('journal regressions', () => {
  it('a failed async commit keeps its rows ahead of newer ones (per-key order after a crash)', async () => {
    const inner = new MemoryStore()
    const gates: ((ok: boolean) => void)[] = []
    const store: Store = {
      name: 'async',
      recovered: () => inner.recovered(),
      close: () => inner.close(),
      commit: (batch: JournalBatch) =>
        new Promise<void>((resolve, reject) => {
          gates.push((ok) => {
            if (!ok) return reject(new Error('connection reset'))
            inner.commit(batch)
            resolve()
          })
        }),
    }
    const { loop, clock } = loopOn(store)
    loop.on('job', () => {})
    loop.events.on('store-error', () => {})
    loop.start()
    loop.pause()
    loop.post('job', { n: 'A' }, { key: 'k' })
    await settle(clock) // A's batch is in flight
    loop.post('job', { n: 'B' }, { key: 'k' }) // accepted meanwhile
    gates.shift()?.(false) // A's commit fails
    await settle(clock, 100) // the retry: A and B in one batch
    gates.shift()?.(true)
    await settle(clock)
    expect(payloads(inner)).toEqual(['A/queued', 'B/queued'])
  })

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

  it('keeps a dead letter as posted when the handler changed its payload into something JSON cannot take', async () => {
    const store = new MemoryStore()
    const { loop, clock } = loopOn(store)
    loop.on('job', (m) => {
      m.payload.total = 10n
      throw new NonRetryableError('declined')
    })
    loop.start()
    loop.post('job', { n: 'x' })
    await settle(clock)
    await settle(clock)
    await loop.flushed()
    expect(loop.metrics().journal?.failing).toBe(false)
    expect(store.recovered().deadLetters.map((l) => l.payload)).toEqual([{ n: 'x' }])
    expect(loop.tryPost('job', { n: 'y' }).ok).toBe(true)
  })

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

  it('keeps delayed messages in the journal across a plain stop(), and the next start runs them', async () => {
    const store = new MemoryStore()
    const { loop, clock } = loopOn(store)
    loop.on('job', () => {})
    loop.start()
    loop.postDelayed('job', { n: 'later' }, 3_600_000)
    await settle(clock)
    const snapshot = await loop.stop()
    expect(snapshot.messages.map((m) => m.state)).toEqual(['delayed'])
    expect(payloads(store)).toEqual(['later/delayed'])
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

  it('holds the retry back-off while commits fail, however busy the loop is', async () => {
    const inner = new MemoryStore()
    let attempts = 0
    const store: Store = {
      name: 'down',
      recovered: () => inner.recovered(),
      close: () => inner.close(),
      commit: () => {
        attempts++
        throw new Error('EIO')
      },
    }
    const { loop, clock } = loopOn(store)
    loop.events.on('store-error', () => {})
    loop.on('job', async (_m, ctx) => {
      await clock.sleep(1)
      if (ctx.attempt < 50) throw new RetryableError('again')
    })
    loop.start()
    loop.post('job', { n: 'x' }, { retry: { maxAttempts: 60, baseMs: 1, jitter: 0, factor: 1 } })
    for (let t = 0; t < 100; t++) await settle(clock, 1)
    expect(attempts).toBeLessThanOrEqual(6) // 50, 100, 200 … ms apart, not one per busy turn
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

  it('records a retry that came back from its back-off as queued again', async () => {
    const store = new MemoryStore()
    const clock = new VirtualClock()
    const loop = createLoop<Jobs>({ clock, logger: false, store, retry: { maxAttempts: 3, baseMs: 100, jitter: 0 } })
    loop.on('job', async (_m, ctx) => {
      if (ctx.attempt === 1) throw new RetryableError('again')
      await clock.sleep(60_000)
    })
    loop.start()
    loop.post('job', { n: 'r' })
    await settle(clock)
    expect(payloads(store)).toEqual(['r/retry-scheduled'])
    await settle(clock, 150)
    expect(payloads(store)).toEqual(['r/queued'])
  })
})
