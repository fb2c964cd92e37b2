/**
 * The journal stage alone, against fakes of its ports: a store that records its calls (and fails or
 * holds its answer on demand), the virtual clock, the real side tables. Pins the commit loop's phases
 * (docs/design/journal.md), the dirty set's coalescing, and — a property — that the store ends up
 * holding what a plain model of the messages says, whatever the commits do on the way.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Traces } from '../../src/failure/trace.js'
import { LedgerSlot } from '../../src/idempotency/ledger.js'
import { type JournalBatch, MemoryStore, type Store, StoreError, VirtualClock } from '../../src/index.js'
import { Envelope, Where } from '../../src/internal/envelope.js'
import { LoopEmitter } from '../../src/internal/loop-emitter.js'
import { PostExtras } from '../../src/internal/post-extras.js'
import { Journal } from '../../src/journal/journal.js'
import { nextPhase } from '../../src/journal/phase.js'

type Jobs = { job: { n: number } }

// A store that records each call, keeps what committed in a MemoryStore and fails the next `failures`
// commits. It answers at once; with `holds`, when the test calls `answer()`; with `latencyMs`, that
// much later on the clock.
class FakeStore implements Store {
  readonly name = 'fake'
  readonly calls: { at: number; what: 'commit' | 'close'; batch?: JournalBatch }[] = []
  readonly kept = new MemoryStore('fake')
  failures = 0
  holds = false
  latencyMs = 0
  readonly #open: ((ok: boolean) => void)[] = []
  readonly #clock: VirtualClock

  constructor(clock: VirtualClock) {
    this.#clock = clock
  }

  recovered() {
    return this.kept.recovered()
  }

  commit(batch: JournalBatch): void | Promise<void> {
    this.calls.push({ at: this.#clock.now(), what: 'commit', batch })
    const fails = this.failures > 0
    if (fails) this.failures--
    const write = (ok: boolean) => {
      if (fails) throw new Error('SQLITE_FULL: database or disk is full')
      if (!ok) throw new Error('connection reset')
      this.kept.commit(batch)
    }
    if (!this.holds && this.latencyMs === 0) return write(true)
    return new Promise((resolve, reject) => {
      const answer = (ok: boolean) => {
        try {
          write(ok)
          resolve()
        } catch (error) {
          reject(error)
        }
      }
      if (this.holds) this.#open.push(answer)
      else this.#clock.setTimeout(() => answer(true), this.latencyMs)
    })
  }

  /** Answers the oldest held commit, and lets the journal see the answer (no virtual time passes). */
  async answer(ok: boolean): Promise<void> {
    this.#open.shift()?.(ok)
    await new Promise((resolve) => setImmediate(resolve)) // a real turn: the answer's microtasks run
  }

  close(): void {
    this.calls.push({ at: this.#clock.now(), what: 'close' })
  }

  /** What each call was: `commit@<ms> <ids put> -<ids removed>`, `close@<ms>`. */
  get log(): string[] {
    return this.calls.map((c) => {
      if (c.batch === undefined) return `${c.what}@${c.at}`
      const puts = c.batch.messages.map((r) => `${r.id.slice(2)}:${r.state}`).join(',')
      return `commit@${c.at} [${puts}] -[${c.batch.removed.map((id) => id.slice(2)).join(',')}]`
    })
  }
}

// A journal over a fake store on a virtual clock, what it reported, and messages to journal.
function rig() {
  const clock = new VirtualClock()
  const store = new FakeStore(clock)
  const events = new LoopEmitter<Jobs>()
  const reported: string[] = []
  events.on('store-error', (e) => reported.push(`store-error: ${e.message.replace('Journal store fake ', '')}`))
  events.on('store-recovered', () => reported.push('store-recovered'))
  const never = () => {
    throw new Error('no ledger in these tests')
  }
  const parts = {
    clock,
    events,
    extras: new PostExtras(),
    traces: new Traces(false, 0),
    ledger: new LedgerSlot(never, false),
    maxCrashesFor: () => 3,
  }
  const journal = new Journal<Jobs>(store, parts)
  let seq = 0
  // Admits a new message: ready, or delayed until `dueAt` on the clock.
  const accept = (dueAt?: number): Envelope => {
    const m = new Envelope('t', seq++, 'job', { n: seq }, undefined, 5, clock.now(), undefined)
    journal.admitted(m, Journal.json('payload', m.payload))
    if (dueAt !== undefined) move(m, Where.Delayed, dueAt)
    return m
  }
  const move = (m: Envelope, where: Where, dueAt?: number): void => {
    m.where = where
    if (dueAt === undefined) journal.touch(m)
    else journal.timed(m, dueAt)
  }
  return { clock, store, journal, events, reported, accept, move, turn: () => clock.advance(0) }
}

describe('Journal', () => {
  describe('phase', () => {
    it('goes idle → scheduled (a change) → committing (the next turn) → idle (the store answered)', async () => {
      const { store, journal, accept, turn } = rig()
      store.holds = true
      expect(journal.phase).toBe('idle')
      accept()
      accept()
      expect(journal.phase).toBe('scheduled')
      expect(store.calls).toEqual([])
      await turn()
      expect(journal.phase).toBe('committing')
      expect(store.log).toEqual(['commit@0 [0:queued,1:queued] -[]'])
      accept() // gathers for the next batch: one commit at a time
      await store.answer(true)
      expect(journal.phase).toBe('scheduled')
      await turn()
      await store.answer(true)
      expect(journal.phase).toBe('idle')
      expect(store.log).toEqual(['commit@0 [0:queued,1:queued] -[]', 'commit@0 [2:queued] -[]'])
      expect(journal.stats()).toMatchObject({ rows: 3, pending: 0, commits: 2, failing: false })
    })

    it('backs off after a failed commit (50 ms, doubling, at most 5 s), gathers changes for the retry, recovers', async () => {
      const { clock, store, journal, reported, accept, turn } = rig()
      store.failures = 8
      accept()
      await turn()
      expect(journal.phase).toBe('backing-off')
      expect(journal.failure).toBeInstanceOf(StoreError)
      accept() // waits for the retry: the back-off holds
      await turn()
      expect(store.calls).toHaveLength(1)
      await clock.advance(20_000)
      expect(store.calls.map((c) => c.at)).toEqual([0, 50, 150, 350, 750, 1550, 3150, 6350, 11350])
      expect(store.log.at(-1)).toBe('commit@11350 [0:queued,1:queued] -[]')
      expect(reported).toEqual([
        ...Array(8).fill('store-error: failed to commit: SQLITE_FULL: database or disk is full'),
        'store-recovered',
      ])
      expect(journal.phase).toBe('idle')
      expect(journal.stats()).toMatchObject({ commits: 1, failedCommits: 8, failing: false })
      store.failures = 1 // a success resets the back-off
      accept()
      await clock.advance(1_000)
      expect(store.calls.slice(-2).map((c) => c.at)).toEqual([20_000, 20_050])
    })

    it('holds the back-off for a change a store-error listener makes, even after a full batch failed', async () => {
      const { clock, store, journal, events, accept, turn } = rig()
      store.failures = 1
      events.once('store-error', () => accept())
      for (let i = 0; i < 256; i++) accept() // a full batch: given back, it commits without gathering
      await turn()
      expect(journal.phase).toBe('backing-off')
      await clock.advance(50)
      expect(store.calls.map((c) => [c.at, c.batch?.messages.length])).toEqual([
        [0, 256],
        [50, 257],
      ])
    })

    it('close() while committing waits for the answer, commits what changed meanwhile at once, then closes', async () => {
      const { clock, store, journal, accept } = rig()
      store.holds = true
      accept()
      await clock.advance(0)
      const closed = journal.close()
      expect(journal.close()).toBe(closed)
      expect(journal.phase).toBe('closing-commit')
      accept()
      expect(journal.phase).toBe('closing-commit') // no turn scheduled: the answer looks again
      await store.answer(true)
      expect(journal.phase).toBe('closing-commit')
      expect(store.calls.map((c) => c.what)).toEqual(['commit', 'commit']) // never closed under a commit
      await store.answer(true)
      await closed
      expect(journal.phase).toBe('closed')
      expect(store.log).toEqual(['commit@0 [0:queued] -[]', 'commit@0 [1:queued] -[]', 'close@0'])
    })

    it('close() after a failure cancels the back-off, commits at once, tries twice, never retries after', async () => {
      const { clock, store, journal, reported, accept, turn } = rig()
      store.failures = 3
      accept()
      await turn()
      expect(journal.phase).toBe('backing-off')
      await journal.close()
      expect(journal.phase).toBe('closed')
      expect(store.log).toEqual([
        'commit@0 [0:queued] -[]',
        'commit@0 [0:queued] -[]',
        'commit@0 [0:queued] -[]',
        'close@0',
      ])
      expect(reported).toHaveLength(3)
      await clock.advance(10_000)
      expect(store.calls).toHaveLength(4)
      const late = await journal.flushed().catch((e: unknown) => e)
      expect(late).toBeInstanceOf(StoreError)
      expect((late as StoreError).message).toBe(
        'Journal store fake failed to commit: the loop stopped and closed its store: changes made since were not committed',
      )
    })

    it('close() after a failure whose first try succeeds reports the recovery and closes', async () => {
      const { store, journal, reported, accept, turn } = rig()
      store.failures = 1
      accept()
      await turn()
      await journal.close()
      expect(store.log).toEqual(['commit@0 [0:queued] -[]', 'commit@0 [0:queued] -[]', 'close@0'])
      expect(reported.at(-1)).toBe('store-recovered')
      await expect(journal.flushed()).resolves.toBeUndefined()
    })

    it('writes nothing after close(): a change then is reported by flushed(), never committed', async () => {
      const { clock, store, journal, accept } = rig()
      await journal.close()
      accept()
      expect(journal.phase).toBe('closed')
      await clock.advance(1_000)
      expect(store.log).toEqual(['close@0'])
      await expect(journal.flushed()).rejects.toBeInstanceOf(StoreError)
    })

    it('makes an illegal transition a loud internal error', () => {
      expect(() => nextPhase('closed', 'committing')).toThrow(
        'Flowing internal error: the journal cannot go from closed to committing (from closed: none)',
      )
      expect(() => nextPhase('idle', 'committing')).toThrow(/from idle: scheduled, closing\)$/)
      expect(nextPhase('backing-off', 'closing')).toBe('closing')
    })
  })

  describe('dirty set', () => {
    it('a message accepted and finished within one batch writes no row (the batch is empty, yet committed)', async () => {
      const { store, journal, accept, move, turn } = rig()
      move(accept(), Where.Done)
      await turn()
      expect(store.log).toEqual(['commit@0 [] -[]'])
      expect(journal.stats()).toMatchObject({ rows: 0, pending: 0 })
    })

    it('a message changed many times between two batches is written once, as it stands then', async () => {
      const { store, accept, move, turn } = rig()
      const m = accept(100_000)
      move(m, Where.Ready)
      move(m, Where.Backoff, 200)
      await turn()
      expect(store.log).toEqual(['commit@0 [0:retry-scheduled] -[]'])
      expect(store.calls[0]?.batch?.messages[0]?.dueAtEpochMs).toBe(Date.UTC(2026, 0, 1) + 200)
    })

    it('a finished message with a row is one removal, in the batch after its row is written', async () => {
      const { store, accept, move, turn } = rig()
      store.holds = true
      const m = accept()
      await turn()
      move(m, Where.Done) // while its row is in flight
      await store.answer(true)
      await turn()
      await store.answer(true)
      expect(store.log).toEqual(['commit@0 [0:queued] -[]', 'commit@0 [] -[0]'])
      expect(store.kept.rows.messages).toBe(0)
    })
  })

  describe('store contents', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('accept' as const), delayed: fc.boolean() }),
      fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('delay' as const), pick: fc.nat(), ms: fc.integer({ min: 1, max: 9 }) }),
      fc.record({ kind: fc.constant('ready' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('fail-commit' as const) }),
      fc.record({ kind: fc.constant('turn' as const), ms: fc.constantFrom(0, 1, 3, 60, 400) }),
    )
    type Op = typeof op extends fc.Arbitrary<infer T> ? T : never
    const scenario = fc.record({ ops: fc.array(op, { maxLength: 60 }), latencyMs: fc.constantFrom(0, 0, 1, 5) })

    it('match a model of the messages after any accepts, finishes, delays, failed commits and a close', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ ops, latencyMs }) => {
          const { clock, store, journal, accept, move } = rig()
          store.latencyMs = latencyMs
          const live: Envelope[] = []
          const model = new Map<string, string>() // id → state@due, in accept order
          const far = (ms: number) => 100_000 * ms // due long after the run: never overdue
          const view = (m: Envelope, state: string, dueAt?: number) =>
            model.set(m.id, dueAt === undefined ? state : `${state}@${Date.UTC(2026, 0, 1) + dueAt}`)
          const run = async (o: Op) => {
            const m = 'pick' in o ? live[o.pick % Math.max(1, live.length)] : undefined
            if (o.kind === 'accept') {
              const n = accept(o.delayed ? far(1) : undefined)
              live.push(n)
              view(n, o.delayed ? 'delayed' : 'queued', o.delayed ? far(1) : undefined)
            } else if (o.kind === 'fail-commit') store.failures = 1
            else if (o.kind === 'turn') await clock.advance(o.ms)
            else if (m === undefined) return
            else if (o.kind === 'finish') {
              move(m, Where.Done)
              live.splice(live.indexOf(m), 1)
              model.delete(m.id)
            } else if (o.kind === 'delay') {
              move(m, Where.Backoff, far(o.ms))
              view(m, 'retry-scheduled', far(o.ms))
            } else {
              move(m, Where.Ready)
              view(m, 'queued')
            }
          }
          const held = () =>
            store.kept.recovered().messages.map((r) => {
              const due = r.dueAtEpochMs === undefined ? '' : `@${r.dueAtEpochMs}`
              return [r.id, `${r.state}${due}`]
            })
          for (const o of ops) {
            await run(o)
            // At rest — nothing changed since the last commit, none in flight — the store is the model.
            if (journal.phase === 'idle' && journal.stats().pending === 0) expect(held()).toEqual([...model])
          }
          store.failures = 0 // the close meets a healthy store (a commit in flight may still fail)
          const closed = journal.close()
          await clock.advance(100) // an asynchronous store answers on the clock
          await closed
          expect(journal.phase).toBe('closed')
          expect(held()).toEqual([...model])
          expect(journal.stats().rows).toBe(model.size)
          await expect(journal.flushed()).resolves.toBeUndefined()
        }),
        { numRuns: 300 },
      )
    })
  })
})
