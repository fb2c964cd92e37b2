import { describe, expect, it } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  type JournalBatch,
  type LoopOptions,
  MemoryStore,
  type Store,
  StoreError,
  VirtualClock,
} from '../../src/index.js'
import { describeDurableLoop } from '../contract/loop-contract.js'
import { thrown } from '../fixtures.js'

interface Jobs {
  job: { n: number; key?: string }
}

// A loop on a virtual clock over `store`, recording what ran.
function durable(store: Store, clock = new VirtualClock(), options: LoopOptions = {}) {
  const loop = createLoop<Jobs>({ clock, logger: false, store, workers: 2, ...options })
  const ran: number[] = []
  loop.on('job', (m) => {
    ran.push(m.payload.n)
  })
  return { loop, clock, ran }
}

// Lets the journal's once-per-turn commit run (a zero-delay timer on the virtual clock).
async function settle(clock: VirtualClock, ms = 0): Promise<void> {
  await clock.advance(ms)
  await clock.advance(0)
}

// A store whose commits fail while `failing` is set (a disk full, a lost connection).
class FlakyStore extends MemoryStore {
  failing = false
  override commit(batch: JournalBatch): void {
    if (this.failing) throw new Error('SQLITE_FULL: database or disk is full')
    super.commit(batch)
  }
}

describe('a loop with a journal store', () => {
  it('refuses posts before start() with a StoreError, and says why', () => {
    const { loop } = durable(new MemoryStore('mem'))
    const result = loop.tryPost('job', { n: 1 })
    expect(result.ok).toBe(false)
    expect(result.status).toBe('not-durable')
    const error = (result as { error: Error }).error
    expect(error).toBeInstanceOf(StoreError)
    expect((error as StoreError).code).toBe('ERR_FLOWING_STORE')
    expect((error as StoreError).operation).toBe('recover')
    expect(error.message).toMatch(/^Journal store mem failed to recover: posts are accepted from start\(\) on/)
    expect(thrown(() => loop.post('job', { n: 1 }))).toBeInstanceOf(StoreError)
    expect(loop.metrics().counters.accepted).toBe(0)
  })

  it('does not start by itself, and refuses autoStart: true or a store without its methods', () => {
    expect(durable(new MemoryStore()).loop.state).toBe('created')
    const auto = thrown(() => createLoop({ store: new MemoryStore(), autoStart: true }))
    expect(auto).toBeInstanceOf(InvalidArgumentError)
    expect(auto.message).toMatch(/options\.autoStart.*with a `store`/)
    const partial = { name: 'x', recovered: () => ({ messages: [], deadLetters: [], keys: [] }), close() {} }
    const bad = thrown(() => createLoop({ store: partial as unknown as Store }))
    expect(bad).toBeInstanceOf(InvalidArgumentError)
    expect(bad.message).toMatch(/`options\.store\.commit` to be a function/)
    expect(thrown(() => createLoop({ store: { ...partial, name: '', commit() {} } as Store })).message).toMatch(
      /options\.store\.name/,
    )
  })

  it('commits a burst of posts in one batch, and a message that finished before the commit costs no row', async () => {
    const store = new MemoryStore()
    const { loop, clock, ran } = durable(store)
    loop.start()
    for (let n = 0; n < 1000; n++) loop.post('job', { n })
    await settle(clock)
    await loop.drain()
    await settle(clock)
    expect(ran).toHaveLength(1000)
    expect(store.commits).toBeLessThanOrEqual(2)
    const stats = loop.metrics().journal
    expect(stats).toMatchObject({ store: 'memory', rows: 0, pending: 0, commits: store.commits, failing: false })
    expect(stats?.commitTime.count).toBe(store.commits)
    expect(store.rows.messages).toBe(0)
    await loop.flushed()
  })

  it('resolves flushed() once the posts are in the store', async () => {
    const store = new MemoryStore()
    const { loop, clock } = durable(store)
    loop.start()
    loop.pause()
    loop.post('job', { n: 1 }, { key: 'a' })
    loop.postDelayed('job', { n: 2 }, 5_000)
    let flushed = false
    const done = loop.flushed().then(() => (flushed = true))
    expect(store.rows.messages).toBe(0)
    await settle(clock)
    await done
    expect(flushed).toBe(true)
    const recovered = store.reopen().recovered()
    expect(recovered.messages.map((r) => [r.state, r.key, r.payloadJson])).toEqual([
      ['queued', 'a', '{"n":1}'],
      ['delayed', undefined, '{"n":2}'],
    ])
    expect(recovered.messages[1]?.dueAtEpochMs).toBe(clock.wallNow() + 5_000)
  })

  it('reports a failing commit, refuses posts meanwhile, loses nothing, and recovers when the store does', async () => {
    const store = new FlakyStore('flaky')
    const { loop, clock } = durable(store)
    const errors: StoreError[] = []
    const recoveries: string[] = []
    loop.events.on('store-error', (e) => errors.push(e))
    loop.events.on('store-recovered', (name) => recoveries.push(name))
    loop.start()
    loop.pause()
    store.failing = true
    loop.post('job', { n: 1 })
    const flushed = loop.flushed().then(
      () => undefined,
      (e: unknown) => e,
    )
    await settle(clock)
    const failure = await flushed
    expect(failure).toBeInstanceOf(StoreError)
    expect((failure as StoreError).message).toBe(
      'Journal store flaky failed to commit: SQLITE_FULL: database or disk is full',
    )
    expect(errors).toHaveLength(1)
    const refused = loop.tryPost('job', { n: 2 })
    expect(refused.status).toBe('not-durable')
    expect((refused as { error: Error }).error).toBe(failure)
    expect(loop.queued).toBe(1) // the accepted message is still there
    store.failing = false
    await settle(clock, 60) // the retry
    expect(recoveries).toEqual(['flaky'])
    expect(store.reopen().recovered().messages).toHaveLength(1)
    expect(loop.tryPost('job', { n: 3 }).ok).toBe(true)
  })

  it('waits for a store whose commit is a promise, one commit at a time', async () => {
    let inFlight = 0
    let most = 0
    const inner = new MemoryStore()
    const store: Store = {
      name: 'async',
      recovered: () => inner.recovered(),
      close: () => inner.close(),
      commit: async (batch) => {
        most = Math.max(most, ++inFlight)
        await new Promise((r) => setTimeout(r, 2))
        inner.commit(batch)
        inFlight--
      },
    }
    const clock = new VirtualClock()
    const { loop } = durable(store, clock)
    loop.start()
    loop.pause()
    for (let round = 0; round < 5; round++) {
      loop.post('job', { n: round })
      await settle(clock)
    }
    while (inner.rows.messages < 5) {
      await new Promise((r) => setTimeout(r, 3))
      await settle(clock) // the next batch starts on the loop's clock
    }
    expect(most).toBe(1)
    expect(inner.rows.messages).toBe(5)
  })

  it('refuses a payload or checkpoint that JSON cannot keep, and admits nothing', async () => {
    const { loop, clock } = durable(new MemoryStore())
    loop.start()
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    const error = thrown(() => loop.post('job', cyclic as never))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toMatch(/^Expected `payload` to be JSON-serializable \(the loop journals it\)/)
    expect(thrown(() => loop.postDelayed('job', { n: 10n } as never, 5))).toBeInstanceOf(InvalidArgumentError)
    expect(loop.metrics().counters.accepted).toBe(0)
    const seen: unknown[] = []
    loop.on(
      'job',
      (_m, ctx) => {
        try {
          ctx.commit(10n)
        } catch (e) {
          seen.push(e)
        }
      },
      { replace: true },
    )
    loop.post('job', { n: 1 })
    await settle(clock)
    expect(seen[0]).toBeInstanceOf(InvalidArgumentError)
    expect((seen[0] as Error).message).toMatch(/`checkpoint` to be JSON-serializable/)
  })

  it('re-admits rows a shared store takes over while the loop runs (watch)', async () => {
    const inner = new MemoryStore()
    let adopt: ((contents: ReturnType<Store['recovered']>) => void) | undefined
    const store: Store = {
      name: 'shared',
      recovered: () => inner.recovered(),
      commit: (batch) => inner.commit(batch),
      close: () => inner.close(),
      watch: (fn) => {
        adopt = fn
      },
    }
    const { loop, clock, ran } = durable(store)
    loop.start()
    expect(adopt).toBeTypeOf('function')
    const orphan = {
      id: 'dead:1',
      type: 'job',
      payloadJson: '{"n":7}',
      priority: 5 as const,
      traceId: 'dead:1',
      hops: 0,
    }
    adopt?.({ messages: [{ ...orphan, state: 'queued', attempts: [] }], deadLetters: [], keys: [] })
    await settle(clock)
    await loop.drain()
    expect(ran).toEqual([7])
    expect(loop.metrics().counters.restored).toBe(1)
  })

  it('fails start() with a StoreError when the store cannot be read, and recovers on a later start()', () => {
    let broken = true
    const inner = new MemoryStore()
    const store: Store = {
      name: 'unreadable',
      recovered: () => {
        if (broken) throw new Error('SQLITE_CORRUPT: database disk image is malformed')
        return inner.recovered()
      },
      commit: (batch) => inner.commit(batch),
      close: () => inner.close(),
    }
    const { loop } = durable(store)
    const error = thrown(() => loop.start())
    expect(error).toBeInstanceOf(StoreError)
    expect(error.message).toBe(
      'Journal store unreadable failed to recover: SQLITE_CORRUPT: database disk image is malformed',
    )
    expect(loop.state).toBe('created')
    broken = false
    loop.start()
    expect(loop.state).toBe('running')
    expect(loop.tryPost('job', { n: 1 }).ok).toBe(true)
  })

  it('resolves stop() even when the last commit and the close fail, reporting both', async () => {
    const store = new FlakyStore('dying')
    store.close = () => {
      throw new Error('EIO: i/o error, close')
    }
    const { loop, clock } = durable(store)
    const operations: string[] = []
    loop.events.on('store-error', (e) => operations.push(e.operation))
    loop.start()
    loop.pause()
    loop.post('job', { n: 1 })
    store.failing = true
    const snapshot = await loop.stop({ deadlineMs: 0 })
    expect(snapshot.messages).toHaveLength(1) // nothing is lost: the snapshot still has it
    expect(operations).toEqual(['commit', 'commit', 'close'])
    await settle(clock, 10_000)
    expect(operations).toHaveLength(3) // no retry after the stop
  })
})

describe('a loop whose store misbehaves', () => {
  // A store whose commit returns whatever `answer` makes of the batch's real commit.
  function wrapped(answer: (commit: () => void) => unknown) {
    const inner = new MemoryStore('odd')
    const store = {
      name: 'odd',
      recovered: () => inner.recovered(),
      close: () => inner.close(),
      commit: (batch: JournalBatch) => answer(() => inner.commit(batch)),
    } as Store
    return { inner, store }
  }

  it('treats a thenable whose then throws as a failed commit', async () => {
    const { store } = wrapped(() => ({
      // biome-ignore lint/suspicious/noThenProperty: a thenable whose then getter throws
      get then() {
        throw new Error('then getter exploded')
      },
    }))
    const { loop, clock } = durable(store)
    const errors: StoreError[] = []
    loop.events.on('store-error', (e) => errors.push(e))
    loop.start()
    loop.post('job', { n: 1 })
    await settle(clock)
    expect(errors[0]?.message).toBe('Journal store odd failed to commit: then getter exploded')
  })

  it('counts a thenable that answers twice, and both ways, once', async () => {
    const { inner, store } = wrapped((commit) => ({
      // biome-ignore lint/suspicious/noThenProperty: a thenable that answers twice and both ways
      then(ok: () => void, fail: (e: unknown) => void) {
        commit()
        ok()
        ok()
        fail(new Error('late rejection'))
      },
    }))
    const { loop, clock } = durable(store)
    const errors: StoreError[] = []
    loop.events.on('store-error', (e) => errors.push(e))
    loop.start()
    loop.pause()
    loop.post('job', { n: 1 })
    await settle(clock)
    await loop.flushed()
    expect(errors).toEqual([])
    expect(loop.metrics().journal?.commits).toBe(1)
    expect(inner.rows.messages).toBe(1)
  })

  it('reports a commit that never answers, refuses posts meanwhile, and recovers when it answers', async () => {
    let answer: (() => void) | undefined
    const { store } = wrapped(
      (commit) =>
        new Promise<void>((resolve) => {
          answer = () => {
            commit()
            resolve()
          }
        }),
    )
    const { loop, clock } = durable(store)
    const errors: StoreError[] = []
    loop.events.on('store-error', (e) => errors.push(e))
    loop.start()
    loop.pause()
    loop.post('job', { n: 1 })
    await settle(clock)
    await settle(clock, 10_000)
    expect(errors.map((e) => e.message)).toEqual([
      'Journal store odd failed to commit: the commit has not answered in 10000 ms (it is still awaited)',
    ])
    expect(loop.tryPost('job', { n: 2 }).status).toBe('not-durable')
    answer?.()
    await settle(clock)
    expect(loop.tryPost('job', { n: 3 }).ok).toBe(true)
  })
})

describeDurableLoop('the reference store', {
  open: () => new MemoryStore(),
  reopen: (previous) => (previous as MemoryStore).reopen(),
})
