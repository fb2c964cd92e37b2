/**
 * Keyed delays against a reference model, on virtual time: random posts in every job-key mode, cancels
 * by key, clock moves and restarts (from a stop's snapshot, or a `kill -9` with a journal). A cancelled
 * message never runs; a replaced one runs once, with the last payload; a debounced one runs once, after
 * the last post's delay or at its burst's limit; nothing runs before the model's due time.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, type JobKeyMode, type Loop, MemoryStore, VirtualClock } from '../../src/index.js'

type Op =
  | { kind: 'post'; k: string; mode: JobKeyMode; delay: number; maxWait: number | undefined }
  | { kind: 'cancel'; k: string }
  | { kind: 'advance'; ms: number }
  | { kind: 'restart' }

const keyArb = fc.constantFrom('a', 'b', 'c')
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('post' as const),
      k: keyArb,
      mode: fc.constantFrom<JobKeyMode>('replace', 'preserve_run_at', 'debounce'),
      delay: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 500 })),
      maxWait: fc.option(fc.integer({ min: 1, max: 700 }), { nil: undefined }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), k: keyArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
)

interface Pending {
  readonly v: number
  readonly due: number
  readonly until: number | undefined
}

type Msgs = { job: { k: string; v: number } }

// The reference: per job key, the message waiting, in wall-clock ms.
class Model {
  readonly pending = new Map<string, Pending>()
  readonly ran: string[] = []
  readonly dueOf = new Map<number, number>()

  post(op: Extract<Op, { kind: 'post' }>, v: number, now: number): void {
    const old = this.pending.get(op.k)
    let due = now + op.delay
    let until: number | undefined
    if (op.mode === 'preserve_run_at' && old !== undefined) due = old.due
    if (op.mode === 'debounce') {
      until = old === undefined ? (op.maxWait === undefined ? undefined : now + op.maxWait) : old.until
      if (until !== undefined) due = Math.min(due, until)
    }
    this.pending.set(op.k, { v, due, until })
    this.dueOf.set(v, due)
  }

  cancel(k: string): boolean {
    return this.pending.delete(k)
  }

  advanceTo(now: number): void {
    for (const [k, p] of this.pending) {
      if (p.due > now) continue
      this.ran.push(`${k}:${p.v}`)
      this.pending.delete(k)
    }
  }
}

function newLoop(clock: VirtualClock, store: MemoryStore | undefined, runs: { id: string; wall: number; v: number }[]) {
  const loop = createLoop<Msgs>({
    clock,
    workers: 4,
    logger: false,
    autoStart: store === undefined,
    ...(store && { store }),
  })
  loop.on('job', (m) => {
    runs.push({ id: `${m.payload.k}:${m.payload.v}`, wall: clock.wallNow(), v: m.payload.v })
  })
  if (store !== undefined) loop.start()
  return loop
}

describe('keyed delays (property, against a model)', () => {
  it('cancelled never runs, replaced runs once with the last payload, debounced runs once; never early', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(opArb, { minLength: 1, maxLength: 40 }), async (durable, ops) => {
        let clock = new VirtualClock()
        let store = durable ? new MemoryStore('memory', () => clock.wallNow()) : undefined
        const runs: { id: string; wall: number; v: number }[] = []
        let loop: Loop<Msgs> = newLoop(clock, store, runs)
        const model = new Model()
        let v = 0
        for (const op of ops) {
          const now = clock.wallNow()
          if (op.kind === 'post') {
            const options = { jobKey: op.k, jobKeyMode: op.mode }
            const o =
              op.mode === 'debounce' && op.maxWait !== undefined ? { ...options, maxWaitMs: op.maxWait } : options
            loop.postDelayed('job', { k: op.k, v }, op.delay, o)
            model.post(op, v++, now)
          } else if (op.kind === 'cancel') {
            expect(loop.jobs.cancel(op.k) === 'cancelled').toBe(model.cancel(op.k))
          } else if (op.kind === 'advance') {
            await clock.advance(op.ms)
            model.advanceTo(clock.wallNow())
          } else if (store !== undefined) {
            // kill -9 once the journal holds everything: a new process on what the store kept.
            await clock.advance(0)
            model.advanceTo(clock.wallNow())
            const acked = loop.flushed()
            await clock.advance(0)
            await acked
            clock = new VirtualClock(0, clock.wallNow())
            store = store.reopen()
            loop = newLoop(clock, store, runs)
          } else {
            const stopped = loop.stop({ deadlineMs: 0 })
            await clock.advance(0)
            const snapshot = JSON.parse(JSON.stringify(await stopped))
            loop = newLoop(clock, undefined, runs)
            loop.restore(snapshot)
          }
        }
        await clock.advance(2_000)
        model.advanceTo(clock.wallNow())
        await loop.drain()
        expect(runs.map((r) => r.id).sort()).toEqual([...model.ran].sort())
        for (const r of runs) expect(r.wall).toBeGreaterThanOrEqual(model.dueOf.get(r.v) as number)
        expect(loop.jobs.size).toBe(0)
      }),
      { numRuns: 150 },
    )
  })
})
