/**
 * Keyed jobs: a message posted with a `jobKey` can be found, cancelled and replaced by that key until
 * it starts running — wherever it waits — and says truthfully when it is too late.
 */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  type LoopSnapshot,
  MemoryStore,
  QueueFullError,
  RetryableError,
  VirtualClock,
} from '../src/index.js'

interface Msgs {
  timeout: { order: string; v: number }
  busy: string
}

function setup(options: Parameters<typeof createLoop>[0] = {}) {
  const clock = new VirtualClock()
  const loop = createLoop<Msgs>({ clock, workers: 2, logger: false, ...options })
  const ran: { v: number; at: number }[] = []
  loop.on('timeout', (m) => {
    ran.push({ v: m.payload.v, at: clock.now() })
  })
  loop.on('busy', () => clock.sleep(1_000))
  return { clock, loop, ran }
}

describe('keyed jobs', () => {
  it('cancels a delayed message by its job key, once', async () => {
    const { clock, loop, ran } = setup()
    loop.postDelayed('timeout', { order: 'a', v: 1 }, 1000, { jobKey: 't:a' })
    expect(loop.jobs.get('t:a')).toMatchObject({ state: 'delayed', dueAt: 1000, type: 'timeout' })
    expect(loop.jobs.size).toBe(1)
    expect(loop.jobs.cancel('t:a')).toBe('cancelled')
    expect(loop.jobs.cancel('t:a')).toBe('unknown')
    expect(loop.jobs.get('t:a')).toBeUndefined()
    await clock.advance(2000)
    await loop.drain()
    expect(ran).toEqual([])
    expect(loop.metrics().counters.cancelled).toBe(1)
    expect(loop.jobs.size).toBe(0)
  })

  it('cancels a timeout that came due while its key was busy (the paid-order story), by key and by handle', async () => {
    const { clock, loop, ran } = setup()
    loop.post('busy', 'x', { key: 'order-1' }) // the order's key is busy for 1 s
    const handle = loop.postDelayed('timeout', { order: 'order-1', v: 1 }, 100, {
      key: 'order-1',
      jobKey: 'payment-timeout:order-1',
    })
    loop.postDelayed('timeout', { order: 'order-1', v: 2 }, 100, { key: 'order-1', jobKey: 'other' })
    await clock.advance(500) // due, waiting behind the busy key
    expect(handle.pending).toBe(false)
    expect(loop.jobs.get('payment-timeout:order-1')).toMatchObject({ state: 'waiting' })
    expect(loop.jobs.cancel('payment-timeout:order-1')).toBe('cancelled')
    expect(loop.jobs.get('other')).toMatchObject({ state: 'waiting' })
    const other = loop.jobs.get('other')
    expect(loop.cancel(other?.id as string)).toBe('cancelled')
    expect(handle.cancel()).toBe(false) // cancelled already
    await clock.advance(2000)
    await loop.drain()
    expect(ran).toEqual([])
  })

  it('a handle cancels until its message starts, and says false once it runs', async () => {
    const { clock, loop } = setup()
    let release = () => {}
    loop.on('timeout', () => new Promise<void>((r) => (release = r)), { replace: true })
    const handle = loop.postDelayed('timeout', { order: 'a', v: 1 }, 10, { jobKey: 'k' })
    await clock.advance(10)
    expect(loop.jobs.cancel('k')).toBe('started')
    expect(handle.cancel()).toBe(false)
    // A post with the key of a running message is a new message that takes the key over.
    loop.postDelayed('timeout', { order: 'a', v: 2 }, 10, { jobKey: 'k' })
    expect(loop.jobs.get('k')).toMatchObject({ state: 'delayed', payload: { v: 2 } })
    release()
    await clock.advance(0)
    expect(loop.jobs.get('k')).toMatchObject({ state: 'delayed' }) // the first one's end leaves the key alone
    expect(loop.jobs.cancel('k')).toBe('cancelled')
  })

  it('replace: the last post runs once, with its payload and its own due time', async () => {
    const { clock, loop, ran } = setup()
    loop.postDelayed('timeout', { order: 'a', v: 1 }, 1000, { jobKey: 'k' })
    await clock.advance(100)
    loop.postDelayed('timeout', { order: 'a', v: 2 }, 300, { jobKey: 'k', jobKeyMode: 'replace' })
    await clock.advance(1000)
    await loop.drain()
    expect(ran).toEqual([{ v: 2, at: 400 }])
    expect(loop.metrics().counters).toMatchObject({ cancelled: 1, succeeded: 1 })
  })

  it('preserve_run_at: the new payload at the old due time (a plain post too)', async () => {
    const { clock, loop, ran } = setup()
    loop.postDelayed('timeout', { order: 'a', v: 1 }, 1000, { jobKey: 'k' })
    await clock.advance(100)
    loop.postDelayed('timeout', { order: 'a', v: 2 }, 50, { jobKey: 'k', jobKeyMode: 'preserve_run_at' })
    const late = loop.post('timeout', { order: 'a', v: 3 }, { jobKey: 'k', jobKeyMode: 'preserve_run_at' })
    expect(loop.jobs.get('k')).toMatchObject({ id: late.id, state: 'delayed', dueAt: 1000 })
    await clock.advance(2000)
    await loop.drain()
    expect(ran).toEqual([{ v: 3, at: 1000 }])
  })

  it('debounce: each post pushes the due time out, never past maxWaitMs from the first', async () => {
    const { clock, loop, ran } = setup()
    const options = { jobKey: 'k', jobKeyMode: 'debounce', maxWaitMs: 1000 } as const
    for (let v = 1; v <= 8; v++) {
      loop.postDelayed('timeout', { order: 'a', v }, 300, options)
      await clock.advance(200)
    }
    await clock.advance(1000)
    await loop.drain()
    // Posts at 0, 200, …, 1400: the burst's limit (1000) fires v = 5 (posted at 800); the next burst
    // starts at 1000 with v = 6 and ends 300 ms after its last post (1400 + 300).
    expect(ran).toEqual([
      { v: 5, at: 1000 },
      { v: 8, at: 1700 },
    ])
  })

  it('cancels a retry that backs off, and a message held by its rate limit', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<Msgs>({ clock, logger: false, retry: { maxAttempts: 5, baseMs: 1000, jitter: 0 } })
    let runs = 0
    loop.on('timeout', () => {
      runs++
      throw new RetryableError('not yet')
    })
    loop.on('busy', () => {}, { rateLimit: { max: 1, perMs: 10_000 } })
    loop.post('timeout', { order: 'a', v: 1 }, { jobKey: 'r' })
    await clock.advance(10)
    expect(loop.jobs.get('r')).toMatchObject({ state: 'retry-scheduled' })
    expect(loop.jobs.cancel('r')).toBe('cancelled')
    loop.post('busy', 'first')
    loop.post('busy', 'second', { jobKey: 'limited' })
    await clock.advance(10)
    expect(loop.jobs.get('limited')).toMatchObject({ state: 'waiting' })
    expect(loop.jobs.cancel('limited')).toBe('cancelled')
    await clock.advance(60_000)
    await loop.drain()
    expect(runs).toBe(1)
    expect(loop.metrics().counters).toMatchObject({ cancelled: 2, succeeded: 1 })
  })

  it('a refused replacement leaves the waiting message as it was', async () => {
    const { clock, loop, ran } = setup({ capacity: 1, overflow: 'reject', autoStart: false })
    loop.post('timeout', { order: 'a', v: 1 }, { jobKey: 'k' })
    expect(() => loop.post('timeout', { order: 'a', v: 2 }, { jobKey: 'k' })).toThrow(QueueFullError)
    const result = loop.tryPost('timeout', { order: 'a', v: 3 }, { jobKey: 'k' })
    expect(result).toMatchObject({ ok: false, status: 'full' })
    expect(loop.jobs.get('k')).toMatchObject({ payload: { v: 1 } })
    loop.start()
    await clock.advance(10)
    await loop.drain()
    expect(ran).toEqual([{ v: 1, at: 0 }])
  })

  it('refuses bad job options with a typed error naming the value, nothing admitted', () => {
    const { loop } = setup()
    const cases: [object, string][] = [
      [{ jobKey: '' }, 'Expected `options.jobKey` to be a non-empty string of at most 512 characters'],
      [{ jobKey: 'x'.repeat(513) }, '`options.jobKey`'],
      [{ jobKey: 'k', jobKeyMode: 'debounced' }, 'Expected `options.jobKeyMode` to be one of'],
      [{ jobKeyMode: 'replace' }, 'jobKeyMode and maxWaitMs need one'],
      [{ jobKey: 'k', maxWaitMs: 10 }, "Expected `options.maxWaitMs` to be absent unless jobKeyMode is 'debounce'"],
      [{ jobKey: 'k', jobKeyMode: 'debounce', maxWaitMs: 0 }, 'a positive finite number of ms'],
      [{ jobKey: 'k', jobKeyMode: 'debounce', maxWaitMs: Number.POSITIVE_INFINITY }, 'positive finite'],
    ]
    for (const [options, message] of cases) {
      let error: unknown
      try {
        loop.postDelayed('timeout', { order: 'a', v: 1 }, 10, options)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect((error as Error).message).toContain(message)
      expect(() => loop.post('timeout', { order: 'a', v: 1 }, options)).toThrow(InvalidArgumentError)
    }
    expect(loop.metrics().counters).toMatchObject({ accepted: 0, rejected: cases.length * 2 })
    expect(loop.jobs.size).toBe(0)
  })

  it('send() and request() take no job key', async () => {
    const { loop } = setup()
    await expect(loop.send('timeout', { order: 'a', v: 1 }, { jobKey: 'k' })).rejects.toThrow(
      /`options.jobKey` to be absent for send\(\)/,
    )
    await expect(loop.request('timeout', { order: 'a', v: 1 }, { jobKey: 'k' })).rejects.toThrow(InvalidArgumentError)
    expect(loop.metrics().counters).toMatchObject({ accepted: 0, rejected: 2, posted: 2 })
  })

  it('a snapshot keeps job keys: cancel by key after restore, and during a stop that hands back', async () => {
    const { clock, loop } = setup()
    loop.start()
    loop.postDelayed('timeout', { order: 'a', v: 1 }, 5_000, { jobKey: 'a' })
    loop.postDelayed('timeout', { order: 'b', v: 2 }, 5_000, { jobKey: 'b' })
    loop.postDelayed('timeout', { order: 'c', v: 3 }, 5_000, { jobKey: 'c', jobKeyMode: 'debounce', maxWaitMs: 9_000 })
    const stopping = loop.stop({ deadlineMs: 1_000 })
    expect(loop.jobs.cancel('b')).toBe('cancelled') // still waiting while the stop drains
    await clock.advance(1_000)
    const snapshot: LoopSnapshot = JSON.parse(JSON.stringify(await stopping))
    expect(snapshot.messages.map((m) => m.job)).toEqual([
      { key: 'a' },
      { key: 'c', untilEpochMs: clock.wallNow() - 1_000 + 9_000 },
    ])
    const restored = createLoop<Msgs>({ clock, logger: false })
    const ran: number[] = []
    restored.on('timeout', (m) => {
      ran.push(m.payload.v)
    })
    expect(restored.restore(snapshot)).toBe(2)
    expect(restored.jobs.get('a')).toMatchObject({ state: 'delayed', dueAt: clock.now() + 4_000 })
    expect(restored.jobs.cancel('a')).toBe('cancelled')
    await clock.advance(10_000)
    await restored.drain()
    expect(ran).toEqual([3])
  })

  it('the journal keeps job keys: cancel by key after a restart', async () => {
    const clock = new VirtualClock()
    const store = new MemoryStore('memory', () => clock.wallNow())
    const first = createLoop<Msgs>({ clock, store, logger: false })
    first.on('timeout', () => {})
    first.start()
    first.postDelayed('timeout', { order: 'a', v: 1 }, 60_000, { jobKey: 'payment-timeout:a' })
    first.postDelayed('timeout', { order: 'b', v: 2 }, 60_000, { jobKey: 'payment-timeout:b' })
    const acked = first.flushed()
    await clock.advance(0)
    await acked
    // kill -9: the store handle writes nothing more, the clock of the dead process stops.
    const later = new VirtualClock(0, clock.wallNow() + 1_000)
    const second = createLoop<Msgs>({ clock: later, store: store.reopen(), logger: false })
    const ran: number[] = []
    second.on('timeout', (m) => {
      ran.push(m.payload.v)
    })
    second.start()
    expect(second.jobs.get('payment-timeout:a')).toMatchObject({ state: 'delayed', dueAt: 59_000 })
    expect(second.jobs.cancel('payment-timeout:a')).toBe('cancelled')
    await later.advance(60_000)
    await second.drain()
    expect(ran).toEqual([2])
  })

  it('cancels by key while held by an open breaker, waiting for its group, or overdue outside a full queue', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<Msgs>({ clock, logger: false, capacity: 2, groups: { concurrency: 1 } })
    const ran: number[] = []
    loop.on(
      'timeout',
      (m) => {
        ran.push(m.payload.v)
      },
      { circuitBreaker: true },
    )
    loop.on('busy', () => clock.sleep(1_000))
    // Held: its breaker is forced open.
    loop.controls.openCircuit('timeout', { cooldownMs: 60_000 })
    loop.post('timeout', { order: 'a', v: 1 }, { jobKey: 'held' })
    await clock.advance(10)
    expect(loop.jobs.get('held')).toMatchObject({ state: 'waiting' })
    expect(loop.jobs.cancel('held')).toBe('cancelled')
    loop.controls.closeCircuit('timeout')
    // Grouped: its group runs one at a time and is busy.
    loop.post('busy', 'x', { group: 'tenant' })
    loop.post('timeout', { order: 'b', v: 2 }, { group: 'tenant', jobKey: 'grouped' })
    await clock.advance(10)
    expect(loop.jobs.cancel('grouped')).toBe('cancelled')
    // Overdue: due while the queue is full (capacity 2), waiting outside it.
    loop.pause()
    while (loop.tryPost('busy', 'fill', { key: 'k' }).ok) {}
    loop.postDelayed('timeout', { order: 'c', v: 3 }, 5, { jobKey: 'overdue' })
    await clock.advance(10)
    expect(loop.metrics().gauges.overdue).toBe(1)
    expect(loop.jobs.cancel('overdue')).toBe('cancelled')
    expect(loop.metrics().gauges.overdue).toBe(0)
    loop.resume()
    await clock.advance(10_000)
    await loop.drain()
    expect(ran).toEqual([])
    expect(loop.metrics().counters.cancelled).toBe(3)
  })
})
