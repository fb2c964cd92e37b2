/**
 * Shutdown, restore and idempotency as properties, on virtual time.
 *
 * - I1 through a stop with a deadline: random workloads (keys, priorities, latencies, failures with
 *   retries, delayed posts) stopped at a random moment with a random deadline — succeeded,
 *   dead-lettered, cancelled and handed back (snapshot) are pairwise disjoint and together are exactly
 *   the accepted messages. Then the snapshot, through JSON, is restored into a fresh loop and drained:
 *   every message ends exactly once over both loops, and every success did its side effect exactly once.
 * - Duplicate storm: every message posted 1–5 times, in one burst and again after completion, with a
 *   synchronous or an asynchronous ledger → at most one side effect per idempotency key, exactly one
 *   when any of its posts succeeded.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type IdempotencyStore,
  type LedgerEntry,
  type Loop,
  type LoopSnapshot,
  NonRetryableError,
  RetryableError,
  VirtualClock,
} from '../../src/index.js'

type Step = 'ok' | 'retryable' | 'non-retryable'

interface Spec {
  readonly key: string | undefined
  readonly priority: 0 | 5 | 9
  readonly latency: number
  readonly script: readonly Step[]
  readonly delayMs: number
  readonly gap: number
}

interface Jobs {
  job: { readonly index: number }
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  key: fc.constantFrom(undefined, 'a', 'b', 'c'),
  priority: fc.constantFrom(0 as const, 5 as const, 9 as const),
  latency: fc.integer({ min: 0, max: 30 }),
  script: fc.array(fc.constantFrom<Step>('ok', 'ok', 'retryable', 'non-retryable'), { minLength: 1, maxLength: 3 }),
  delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 200 })),
  gap: fc.integer({ min: 0, max: 10 }),
})

/** The reference: attempts a script takes under `maxAttempts: 3` until it succeeds or is dead-lettered. */
function attemptsFor(script: readonly Step[]): number {
  for (let attempt = 1; ; attempt++) {
    const step = script[Math.min(attempt - 1, script.length - 1)] as Step
    if (step !== 'retryable' || attempt >= 3) return attempt
  }
}

/** Outcomes and side effects, by job index, over one or more loops. */
class Ledger {
  readonly effects: number[] = []
  // Attempts that ran to an end (not cut off by the stop), by job index, over both loops.
  readonly attempts = new Map<number, number>()
  readonly outcomes = new Map<number, string[]>()

  record(index: number, outcome: string): void {
    const list = this.outcomes.get(index) ?? []
    list.push(outcome)
    this.outcomes.set(index, list)
  }

  /** A loop whose handler follows each job's script and does its side effect on success. */
  loop(clock: VirtualClock, specs: readonly Spec[], workers: number): Loop<Jobs> {
    const loop = createLoop<Jobs>({
      clock,
      workers,
      retry: { maxAttempts: 3, baseMs: 20 },
      random: () => 0.5,
      logger: false,
      idempotency: {},
    })
    loop.on('job', async (m, ctx) => {
      const spec = specs[m.payload.index] as Spec
      await clock.sleep(spec.latency)
      if (ctx.signal.aborted) return // cut off by the stop: no effect (its outcome is the snapshot)
      this.attempts.set(m.payload.index, (this.attempts.get(m.payload.index) ?? 0) + 1)
      const step = spec.script[Math.min(ctx.attempt - 1, spec.script.length - 1)] as Step
      if (step === 'retryable') throw new RetryableError('503')
      if (step === 'non-retryable') throw new NonRetryableError('bad')
      this.effects.push(m.payload.index)
    })
    loop.events.on('succeeded', (m) => this.record(m.payload.index, 'succeeded'))
    loop.events.on('dead-lettered', (m) => this.record(m.payload.index, 'dead-lettered'))
    loop.events.on('cancelled', (m) => this.record(m.payload.index, 'cancelled'))
    loop.events.on('dropped', (m) => this.record(m.payload.index, 'dropped'))
    return loop
  }
}

describe('shutdown and restore (properties)', () => {
  it('I1 through a stop with a deadline, and every message done exactly once after restore', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(specArb, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 150 }), // when the stop comes, after the last post
        fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 120 })), // its deadline
        async (specs, workers, stopAfter, deadlineMs) => {
          const ledger = new Ledger()
          const clock = new VirtualClock()
          const first = ledger.loop(clock, specs, workers)
          const accepted = new Set<number>()
          for (const [index, spec] of specs.entries()) {
            const options = {
              idempotencyKey: `job-${index}`,
              priority: spec.priority,
              ...(spec.key === undefined ? {} : { key: spec.key }),
            }
            if (spec.delayMs > 0) first.postDelayed('job', { index }, spec.delayMs, options)
            else first.post('job', { index }, options)
            accepted.add(index)
            await clock.advance(spec.gap)
          }
          await clock.advance(stopAfter)
          const stopping = first.stop({ deadlineMs })
          await clock.run()
          const snapshot: LoopSnapshot = JSON.parse(JSON.stringify(await stopping))
          const handedBack = snapshot.messages.map((m) => (m.payload as { index: number }).index)

          // I1 in the first loop: disjoint outcomes whose union is what was accepted.
          const ended = [...ledger.outcomes.entries()].flatMap(([index, list]) => list.map(() => index))
          expect(new Set(ended).size).toBe(ended.length) // at most one outcome each
          for (const index of handedBack) expect(ledger.outcomes.has(index)).toBe(false)
          expect(new Set([...ended, ...handedBack])).toEqual(accepted)
          expect(ended.length + handedBack.length).toBe(accepted.size)
          const c = first.metrics().counters
          expect(c.accepted).toBe(c.succeeded + c.deadLettered + c.dropped + c.cancelled + c.snapshotted)
          expect(c.snapshotted).toBe(handedBack.length)
          expect(first.sideTableSize).toBe(0) // every outcome freed its per-message entry

          // Restore into a fresh loop and drain: everything ends exactly once over both loops.
          const clock2 = new VirtualClock()
          const second = ledger.loop(clock2, specs, workers)
          expect(second.restore(snapshot)).toBe(handedBack.length)
          await clock2.run() // delayed ones and retries included
          const stopped = second.stop()
          await clock2.run()
          expect((await stopped).messages).toEqual([])
          expect(second.sideTableSize).toBe(0)
          for (const index of accepted) {
            const list = ledger.outcomes.get(index) ?? []
            expect(list).toHaveLength(1)
            const effects = ledger.effects.filter((i) => i === index).length
            expect(effects).toBe(list[0] === 'succeeded' ? 1 : 0) // side effect exactly once per success
            // Attempt counts continue across the restart: as many attempts as the script allows, no more.
            expect(ledger.attempts.get(index)).toBe(attemptsFor((specs[index] as Spec).script))
          }
        },
      ),
      { numRuns: 120, timeout: 5000 },
    )
  }, 60_000) // 120 runs: seconds on a busy 2-core machine

  it('a duplicate storm does each side effect at most once per key (exactly once if any post succeeded)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            copies: fc.integer({ min: 1, max: 5 }),
            later: fc.integer({ min: 0, max: 3 }),
            fails: fc.boolean(),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        fc.boolean(),
        fc.integer({ min: 1, max: 4 }),
        async (keys, asyncStore, workers) => {
          const clock = new VirtualClock()
          const entries = new Map<string, LedgerEntry>()
          const store: IdempotencyStore | undefined = asyncStore
            ? {
                claim: async (key, _ttl, reclaimFailed) => {
                  const found = entries.get(key)
                  if (found !== undefined && !(found.state === 'failed' && reclaimFailed)) return found
                  entries.set(key, { state: 'processing' })
                  return undefined
                },
                set: async (key, entry) => {
                  entries.set(key, entry)
                },
                release: async (key) => {
                  entries.delete(key)
                },
              }
            : undefined
          const loop = createLoop<{ pay: { key: number; copy: number } }>({
            clock,
            workers,
            logger: false,
            idempotency: store === undefined ? {} : { store },
          })
          const effects = new Map<number, number>()
          const succeeded = new Set<number>()
          let attempts = 0
          loop.on('pay', async (m) => {
            attempts++
            await clock.sleep(1 + (attempts % 5))
            // A failing key fails its first attempt only (no retries): a later copy may run it again.
            if ((keys[m.payload.key]?.fails ?? false) && m.payload.copy === 0) throw new NonRetryableError('declined')
            effects.set(m.payload.key, (effects.get(m.payload.key) ?? 0) + 1)
          })
          loop.events.on('succeeded', (m) => succeeded.add(m.payload.key))
          // The burst: every copy of every key in one synchronous stretch.
          for (const [key, k] of keys.entries()) {
            for (let copy = 0; copy < k.copies; copy++)
              loop.tryPost('pay', { key, copy }, { idempotencyKey: `k${key}` })
          }
          await clock.run()
          // Later copies, after completion.
          for (const [key, k] of keys.entries()) {
            for (let copy = 0; copy < k.later; copy++) {
              loop.tryPost('pay', { key, copy: 100 + copy }, { idempotencyKey: `k${key}` })
              await clock.advance(1)
            }
          }
          await clock.run()
          await loop.stop()
          for (const key of keys.keys()) {
            const count = effects.get(key) ?? 0
            expect(count).toBeLessThanOrEqual(1)
            expect(count).toBe(succeeded.has(key) ? 1 : 0)
          }
          const c = loop.metrics().counters
          expect(loop.sideTableSize).toBe(0) // refused duplicates and outcomes freed their entries
          expect(c.posted).toBe(c.accepted + c.rejected)
          expect(c.accepted).toBe(c.succeeded + c.deadLettered + c.dropped + c.cancelled + c.snapshotted)
        },
      ),
      { numRuns: 150, timeout: 5000 },
    )
  }, 60_000)
})
