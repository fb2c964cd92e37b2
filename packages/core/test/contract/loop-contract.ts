/**
 * The durable-loop contract: what a loop on any journal store must do across a crash — the same
 * scenarios for the reference store, SQLite and PostgreSQL. A "crash" abandons the loop (its virtual
 * clock never moves again, so it commits nothing more) and opens the store again.
 */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type LoopOptions,
  NonRetryableError,
  RetryableError,
  type Store,
  VirtualClock,
} from '../../src/index.js'

/** How a store is opened fresh, and opened again on what a previous handle committed. */
export interface DurableHarness {
  open(): Store | Promise<Store>
  reopen(previous: Store): Store | Promise<Store>
  cleanup?(): void | Promise<void>
}

interface Jobs {
  job: { n: number }
}

// Lets the journal's once-per-turn commit run (a zero-delay timer on the virtual clock), and async stores answer.
async function settle(clock: VirtualClock, ms = 0): Promise<void> {
  await clock.advance(ms)
  await clock.advance(0)
  await new Promise((resolve) => setTimeout(resolve, 5))
  await clock.advance(0)
}

// Settles until `done()` holds (an async store's commits come one after another: a recovered message
// starts once its start is committed), for at most 10 s of real time.
async function settleUntil(clock: VirtualClock, done: () => boolean): Promise<void> {
  for (const until = Date.now() + 10_000; !done() && Date.now() < until; ) await settle(clock)
}

// Moves a clock by `ms` in steps short enough for an async store's commit to answer within its deadline.
async function walk(clock: VirtualClock, ms: number, step = 5_000): Promise<void> {
  for (let left = ms; left > 0; left -= step) await settle(clock, Math.min(step, left))
}

// A clock whose wall time is real time (stores expire keys on their own wall clock).
const wallClock = (offsetMs = 0) => new VirtualClock(0, Date.now() + offsetMs)

function loopOn(store: Store, clock: VirtualClock, options: LoopOptions = {}) {
  return createLoop<Jobs>({ clock, logger: false, store, workers: 2, ...options })
}

/** Registers the contract's tests for one store. */
export function describeDurableLoop(name: string, harness: DurableHarness): void {
  describe(`a loop on ${name}`, () => {
    it('recovers after a crash: queued, delayed (never early), backing off with its checkpoint, keyed', async () => {
      const clock = wallClock()
      const store = await harness.open()
      const loop = loopOn(store, clock, { retry: { maxAttempts: 3, baseMs: 1000, jitter: 0 } })
      loop.on('job', async (m, ctx) => {
        if (m.payload.n === 3) {
          ctx.commit({ charged: true })
          throw new RetryableError('downstream 503')
        }
        await clock.sleep(10_000) // running when the process dies
      })
      loop.start()
      loop.post('job', { n: 1 }, { key: 'k', idempotencyKey: 'job-1' })
      loop.post('job', { n: 2 }, { key: 'k' })
      loop.postDelayed('job', { n: 4 }, 3_000)
      loop.post('job', { n: 3 })
      await settle(clock, 1)
      await loop.flushed()
      const crashedAt = clock.wallNow()
      const reopened = await harness.reopen(store)
      const clock2 = new VirtualClock(0, crashedAt + 500)
      const started: [number, number, unknown][] = []
      const loop2 = loopOn(reopened, clock2)
      loop2.on('job', (m, ctx) => {
        started.push([m.payload.n, clock2.wallNow(), ctx.committed])
      })
      loop2.start()
      expect(loop2.metrics().counters.restored).toBe(4)
      await settleUntil(clock2, () => started.length >= 2)
      await settle(clock2)
      expect(started.map((s) => s[0])).toEqual([1, 2]) // key order kept; 3 backs off, 4 is delayed
      await clock2.run()
      await settleUntil(clock2, () => started.length === 4) // each recovered start waits for its commit
      await loop2.drain()
      const at = new Map(started.map(([n, wall, committed]) => [n, { wall, committed }]))
      expect(at.get(3)?.committed).toEqual({ charged: true }) // the retry resumes after its commit point
      expect(at.get(4)?.wall).toBeGreaterThanOrEqual(crashedAt - 1 + 3_000) // never early
      await loop2.stop()
      const reopened2 = await harness.reopen(reopened)
      const loop3 = loopOn(reopened2, wallClock())
      loop3.on('job', () => {})
      loop3.start()
      expect(loop3.metrics().counters.restored).toBe(0) // nothing left
      expect(loop3.tryPost('job', { n: 1 }, { idempotencyKey: 'job-1' }).status).toBe('duplicate') // finished key kept
      await loop3.stop()
      await harness.cleanup?.()
    })

    it('keeps job keys and schedules across a crash: cancel by key, and each due fire once', async () => {
      const clock = wallClock()
      const store = await harness.open()
      const loop = loopOn(store, clock)
      const fires: string[] = []
      loop.on('job', (m) => {
        if (m.headers['flowing-fire-at'] !== undefined) fires.push(m.headers['flowing-fire-at'])
      })
      loop.schedule('every-minute', { every: 60_000, missed: { backfill: 10 } }, 'job', { n: 0 })
      loop.start()
      loop.postDelayed('job', { n: 1 }, 600_000, { jobKey: 'payment-timeout:o-1' })
      loop.postDelayed('job', { n: 2 }, 600_000, { jobKey: 'payment-timeout:o-2' })
      await walk(clock, 60_000) // one fire
      await loop.flushed()
      expect(fires.length).toBe(1)
      const crashedAt = clock.wallNow()
      const reopened = await harness.reopen(store)
      const clock2 = new VirtualClock(0, crashedAt + 150_000) // down for 2.5 min: two fires missed
      const loop2 = loopOn(reopened, clock2)
      const ran: number[] = []
      loop2.on('job', (m) => {
        if (m.headers['flowing-fire-at'] !== undefined) fires.push(m.headers['flowing-fire-at'])
        else ran.push(m.payload.n)
      })
      loop2.schedule('every-minute', { every: 60_000, missed: { backfill: 10 } }, 'job', { n: 0 }) // as at every start
      loop2.start()
      expect(loop2.jobs.cancel('payment-timeout:o-1')).toBe('cancelled')
      await walk(clock2, 600_000)
      await loop2.drain()
      expect(ran).toEqual([2])
      const { posted, accepted, rejected } = loop2.metrics().counters
      expect(posted).toBe(accepted + rejected) // a schedule's fires count as posted
      const times = fires.map((at) => Date.parse(at))
      expect(times).toEqual(times.map((_, k) => (times[0] as number) + k * 60_000)) // none lost, none twice
      expect(times.length).toBeGreaterThanOrEqual(12)
      await loop2.stop()
      await harness.cleanup?.()
    })

    it('keeps dead letters across a restart; replay and purge remove them from the store', async () => {
      const clock = wallClock()
      const store = await harness.open()
      const loop = loopOn(store, clock)
      loop.on('job', () => {
        throw new NonRetryableError('card declined')
      })
      loop.start()
      loop.post('job', { n: 1 })
      loop.post('job', { n: 2 })
      await settle(clock)
      await settle(clock)
      await loop.stop()
      const store2 = await harness.reopen(store)
      const loop2 = loopOn(store2, wallClock())
      const ran: number[] = []
      loop2.on('job', (m) => {
        ran.push(m.payload.n)
      })
      loop2.start()
      const letters = loop2.deadLetters.list()
      expect(letters.map((l) => [l.payload, l.error.message])).toEqual([
        [{ n: 1 }, 'card declined'],
        [{ n: 2 }, 'card declined'],
      ])
      loop2.deadLetters.replay({ ids: [letters[0]?.id ?? ''] })
      loop2.deadLetters.purge({ ids: [letters[1]?.id ?? ''] })
      await loop2.stop()
      expect(ran).toEqual([1])
      const store3 = await harness.reopen(store2)
      expect(store3.recovered().deadLetters).toEqual([])
      await store3.close()
      await harness.cleanup?.()
    })

    it('keeps what a stop hands back, and the next start runs it in key order', async () => {
      const store = await harness.open()
      const loop = loopOn(store, wallClock())
      loop.on('job', () => {})
      loop.start()
      loop.pause()
      for (let n = 0; n < 5; n++) loop.post('job', { n }, { key: 'k' })
      const snapshot = await loop.stop({ deadlineMs: 0 })
      expect(snapshot.messages).toHaveLength(5)
      const clock2 = wallClock()
      const loop2 = loopOn(await harness.reopen(store), clock2)
      const ran: number[] = []
      loop2.on('job', (m) => {
        ran.push(m.payload.n)
      })
      loop2.start()
      await settleUntil(clock2, () => ran.length === 5)
      await loop2.drain()
      await loop2.stop()
      expect(ran).toEqual([0, 1, 2, 3, 4])
      await harness.cleanup?.()
    })
  })
}
