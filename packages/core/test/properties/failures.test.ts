/**
 * Failure handling as properties, on virtual time: random workloads where each message follows a
 * random script of attempt outcomes (success, retryable / unknown / non-retryable failure, timeout),
 * under random retry policies, keys, priorities, latencies and worker counts. A reference model walks
 * each script through the policy and predicts the outcome and the number of attempts.
 *
 * - I1: every accepted message ends succeeded or dead-lettered, exactly once, as the model predicts.
 * - Back-off: the gap before attempt n+1 is at least the back-off the `retrying` event announced,
 *   which lies within the policy's bounds.
 * - I2 across retries: attempts of one key never overlap, and among equal priority a key's later
 *   message starts only after its earlier one finished for good (ordered retries).
 * - Breakers: no attempt starts on a route while its breaker is open; a half-open period starts at
 *   most `probes` attempts; held messages burn no attempt.
 * - Alerts: per type, `window` alerts are at least `windowMs` apart and together with the stop flush
 *   they account for every dead letter.
 * - I4 with retries: a backing-off retry keeps its place, so `queued` (retries included) never passes
 *   `capacity` by more than the worker count (failing attempts taking their place back), and everything
 *   ends at rest.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type DeadLetterAlert,
  type ErrorClass,
  HandlerTimeoutError,
  type Loop,
  NonRetryableError,
  RetryableError,
  type RetryOptions,
  VirtualClock,
} from '../../src/index.js'

type Step = 'ok' | 'retryable' | 'unknown' | 'non-retryable' | 'timeout'

interface Spec {
  readonly key: string | undefined
  readonly priority: 0 | 5
  readonly latency: number
  readonly script: readonly Step[]
  readonly gap: number
}

interface Jobs {
  job: { readonly index: number }
}

const TIMEOUT_MS = 30

const stepArb: fc.Arbitrary<Step> = fc.constantFrom('ok', 'ok', 'retryable', 'unknown', 'non-retryable', 'timeout')
const specArb: fc.Arbitrary<Spec> = fc.record({
  key: fc.constantFrom(undefined, 'a', 'b', 'c'),
  priority: fc.constantFrom(0 as const, 5 as const),
  latency: fc.integer({ min: 0, max: 20 }),
  script: fc.array(stepArb, { minLength: 1, maxLength: 5 }),
  gap: fc.integer({ min: 0, max: 15 }),
})
const policyArb: fc.Arbitrary<
  Required<Pick<RetryOptions, 'maxAttempts' | 'unknownMaxAttempts' | 'baseMs' | 'factor' | 'capMs' | 'jitterStrategy'>>
> = fc
  .record({
    maxAttempts: fc.integer({ min: 1, max: 5 }),
    unknownMaxAttempts: fc.integer({ min: 1, max: 3 }),
    baseMs: fc.integer({ min: 0, max: 40 }),
    factor: fc.constantFrom(1, 1.5, 2, 3),
    extra: fc.integer({ min: 0, max: 200 }),
    jitterStrategy: fc.constantFrom('proportional' as const, 'full' as const, 'decorrelated' as const),
  })
  .map(({ extra, ...p }) => ({ ...p, capMs: p.baseMs + extra }))

/** A seeded uniform source in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s / 2 ** 32
  }
}

const classOf: Record<Exclude<Step, 'ok'>, ErrorClass> = {
  retryable: 'retryable',
  timeout: 'retryable',
  unknown: 'unknown',
  'non-retryable': 'non-retryable',
}

/** The reference model: outcome and attempt count of a script under a policy. */
function predict(script: readonly Step[], p: { maxAttempts: number; unknownMaxAttempts: number }) {
  for (let i = 0; ; i++) {
    const step = script[Math.min(i, script.length - 1)] as Step
    const attempt = i + 1
    if (step === 'ok') return { outcome: 'succeeded', attempts: attempt }
    const c = classOf[step]
    const allowed = c === 'retryable' ? p.maxAttempts : c === 'unknown' ? p.unknownMaxAttempts : 1
    if (attempt >= allowed) return { outcome: 'dead-lettered', attempts: attempt }
  }
}

interface Run {
  readonly spec: Spec
  readonly seq: number
  readonly starts: number[]
  readonly ends: number[]
  readonly backoffs: number[]
  outcomes: string[]
}

async function runWorkload(specs: readonly Spec[], policy: RetryOptions, workers: number, seed: number) {
  const clock = new VirtualClock()
  const loop: Loop<Jobs> = createLoop<Jobs>({
    clock,
    workers,
    timeoutMs: TIMEOUT_MS,
    retry: policy,
    random: seeded(seed),
    logger: false,
    timeoutBreaker: false,
  })
  const runs: Run[] = []
  const inside = new Set<string>()
  const overlaps: string[] = []
  loop.on('job', async (m, ctx) => {
    const run = runs[m.payload.index] as Run
    run.starts.push(clock.now())
    const key = run.spec.key
    if (key !== undefined) {
      if (inside.has(key)) overlaps.push(`${key} at ${clock.now()}`)
      inside.add(key)
    }
    const step = run.spec.script[Math.min(ctx.attempt - 1, run.spec.script.length - 1)] as Step
    try {
      await clock.sleep(step === 'timeout' ? TIMEOUT_MS * 3 : run.spec.latency)
    } finally {
      if (key !== undefined && !ctx.signal.aborted) inside.delete(key)
    }
    if (step === 'retryable') throw new RetryableError('503')
    if (step === 'unknown') throw new Error('?')
    if (step === 'non-retryable') throw new NonRetryableError('bad')
  })
  const byId = new Map<string, Run>()
  const end = (id: string) => byId.get(id)?.ends.push(clock.now())
  loop.events.on('succeeded', (m) => {
    end(m.id)
    byId.get(m.id)?.outcomes.push('succeeded')
  })
  loop.events.on('failed', (m, error) => {
    end(m.id)
    // A timed-out handler leaves its key at the deadline: it no longer counts as inside.
    if (error instanceof HandlerTimeoutError && typeof m.key === 'string') inside.delete(m.key)
  })
  loop.events.on('retrying', (m, r) => byId.get(m.id)?.backoffs.push(r.delayMs))
  loop.events.on('dead-lettered', (m) => byId.get(m.id)?.outcomes.push('dead-lettered'))
  for (const [index, spec] of specs.entries()) {
    const m = loop.post(
      'job',
      { index },
      spec.key === undefined ? { priority: spec.priority } : { key: spec.key, priority: spec.priority },
    )
    const run: Run = { spec, seq: m.seq, starts: [], ends: [], backoffs: [], outcomes: [] }
    runs.push(run)
    byId.set(m.id, run)
    if (spec.gap > 0) await clock.advance(spec.gap)
  }
  const stopped = loop.stop()
  await clock.run()
  await stopped
  return { loop, runs, overlaps }
}

describe('failure handling (properties)', () => {
  it('I1, back-off gaps and per-key order hold across retries, as the reference model predicts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(specArb, { minLength: 1, maxLength: 25 }),
        policyArb,
        fc.integer({ min: 1, max: 4 }),
        fc.integer(),
        async (specs, policy, workers, seed) => {
          const { loop, runs, overlaps } = await runWorkload(specs, policy, workers, seed)
          const c = loop.metrics().counters
          expect(c.accepted).toBe(specs.length)
          expect(c.accepted).toBe(c.succeeded + c.deadLettered) // I1 at rest
          expect(overlaps).toEqual([]) // I2: one attempt per key at a time
          for (const run of runs) {
            const expected = predict(run.spec.script, policy)
            expect(run.outcomes).toEqual([expected.outcome]) // exactly one outcome, the predicted one
            expect(run.starts).toHaveLength(expected.attempts)
            expect(run.backoffs).toHaveLength(expected.attempts - 1)
            for (const [i, delay] of run.backoffs.entries()) {
              expect(delay).toBeGreaterThanOrEqual(0)
              expect(delay).toBeLessThanOrEqual(policy.capMs)
              // never early: the next attempt starts at least the announced back-off after the failure
              expect((run.starts[i + 1] as number) - (run.ends[i] as number)).toBeGreaterThanOrEqual(delay)
            }
          }
          // Ordered retries: a key's later message (same priority) starts after the earlier one ended for good.
          for (const a of runs) {
            for (const b of runs) {
              if (a.spec.key === undefined || a.spec.key !== b.spec.key || a.spec.priority !== b.spec.priority) continue
              if (a.seq < b.seq) expect(b.starts[0] as number).toBeGreaterThanOrEqual(a.ends.at(-1) as number)
            }
          }
        },
      ),
      { numRuns: 150, timeout: 5000 },
    )
  })

  it('an open breaker starts no attempt, a half-open one at most `probes`, and held messages burn none', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ healthy: fc.boolean(), ms: fc.integer({ min: 1, max: 80 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 10 }), latency: fc.integer({ min: 0, max: 10 }) }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.record({
          consecutiveFailures: fc.integer({ min: 1, max: 4 }),
          cooldownMs: fc.integer({ min: 1, max: 50 }),
          probes: fc.integer({ min: 1, max: 3 }),
        }),
        fc.integer({ min: 1, max: 4 }),
        async (phases, posts, breaker, workers) => {
          const clock = new VirtualClock()
          const loop = createLoop<Jobs>({
            clock,
            workers,
            breaker,
            retry: { maxAttempts: 3, baseMs: 5 },
            random: seeded(1),
            logger: false,
          })
          // The downstream's health over time.
          const healthyAt = (t: number) => {
            let at = 0
            for (const phase of phases) {
              if (t < at + phase.ms) return phase.healthy
              at += phase.ms
            }
            return true
          }
          let state = 'closed'
          let probeStarts = 0
          const violations: string[] = []
          const attemptsOf = new Map<string, number>()
          loop.events.on('circuit', (change) => {
            state = change.state
            if (state === 'half-open') probeStarts = 0
          })
          loop.events.on('started', (m) => {
            attemptsOf.set(m.id, (attemptsOf.get(m.id) ?? 0) + 1)
            if (state === 'open') violations.push(`started ${m.id} while open at ${clock.now()}`)
            if (state === 'half-open' && ++probeStarts > breaker.probes) {
              violations.push(`probe ${probeStarts} > ${breaker.probes} at ${clock.now()}`)
            }
          })
          loop.on('job', async (_m, ctx) => {
            await clock.sleep(posts[0]?.latency ?? 0)
            if (!healthyAt(clock.now())) throw new RetryableError(`down (attempt ${ctx.attempt})`)
          })
          const letters: string[] = []
          loop.events.on('dead-lettered', (m, letter) => {
            letters.push(m.id)
            if (letter.attempts.length !== attemptsOf.get(m.id)) violations.push(`${m.id}: attempts mismatch`)
          })
          for (const [index, post] of posts.entries()) {
            loop.post('job', { index })
            await clock.advance(post.gap)
          }
          const stopped = loop.stop()
          await clock.run()
          await stopped
          expect(violations).toEqual([])
          const c = loop.metrics().counters
          expect(c.accepted).toBe(c.succeeded + c.deadLettered) // nothing lost while held
          expect(c.failed).toBe(c.retried + c.deadLettered) // every failure retried or dead-lettered
          for (const id of letters) expect(attemptsOf.get(id)).toBe(3) // never dead-lettered by holding
        },
      ),
      { numRuns: 150, timeout: 5000 },
    )
  })

  it('I4 with retries: retries keep their places, queued stays within capacity + workers, all ends', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            key: fc.constantFrom(undefined, 'a', 'b'),
            fails: fc.integer({ min: 0, max: 3 }),
            latency: fc.integer({ min: 0, max: 10 }),
            gap: fc.integer({ min: 0, max: 5 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 20 }),
        async (posts, capacity, workers, baseMs) => {
          const clock = new VirtualClock()
          const loop = createLoop<Jobs>({
            clock,
            capacity,
            workers,
            retry: { maxAttempts: 3, baseMs, capMs: baseMs },
            random: () => 0.5,
            logger: false,
          })
          const over: string[] = []
          const watch = (what: string) => () => {
            const g = loop.metrics().gauges
            // A failing attempt takes its place back as it leaves `running`: at most one per worker.
            if (g.queued > capacity + workers) over.push(`${what}: queued ${g.queued} > ${capacity} + ${workers}`)
            if (g.retrying > g.queued) over.push(`${what}: retrying ${g.retrying} > queued ${g.queued}`)
          }
          for (const e of ['posted', 'started', 'retrying', 'requeued', 'succeeded', 'dead-lettered'] as const) {
            loop.events.on(e, watch(e))
          }
          loop.on('job', async (m, ctx) => {
            const post = posts[m.payload.index] as (typeof posts)[number]
            await clock.sleep(post.latency)
            if (ctx.attempt <= post.fails) throw new RetryableError('503')
          })
          for (const [index, post] of posts.entries()) {
            loop.tryPost('job', { index }, post.key === undefined ? {} : { key: post.key })
            await clock.advance(post.gap)
          }
          await clock.run()
          const stopped = loop.stop()
          await clock.run()
          await stopped
          expect(over).toEqual([])
          const c = loop.metrics().counters
          expect(c.accepted).toBe(c.succeeded + c.deadLettered)
          expect(loop.metrics().gauges).toMatchObject({ queued: 0, retrying: 0 })
        },
      ),
      { numRuns: 150, timeout: 5000 },
    )
  })

  it('alerts are at least a window apart per type and account for every dead letter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ type: fc.constantFrom('job' as const, 'other' as const), gap: fc.integer({ min: 0, max: 300 }) }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 4 }),
        async (letters, windowMs, threshold) => {
          const clock = new VirtualClock()
          const loop = createLoop<{ job: number; other: number }>({
            clock,
            logger: false,
            alerts: { windowMs, threshold },
          })
          const fail = () => {
            throw new NonRetryableError('x')
          }
          loop.on('job', fail)
          loop.on('other', fail)
          const alerts: DeadLetterAlert[] = []
          loop.events.on('alert', (a) => alerts.push(a))
          for (const letter of letters) {
            loop.post(letter.type, 0)
            await clock.advance(letter.gap)
          }
          const stopped = loop.stop()
          await clock.run()
          await stopped
          for (const type of ['job', 'other']) {
            const mine = alerts.filter((a) => a.type === type)
            const windows = mine.filter((a) => a.reason === 'window')
            for (let i = 1; i < windows.length; i++) {
              expect(
                (windows[i] as DeadLetterAlert).at - (windows[i - 1] as DeadLetterAlert).at,
              ).toBeGreaterThanOrEqual(windowMs)
            }
            expect(mine.filter((a) => a.reason === 'stop').length).toBeLessThanOrEqual(1)
            const total = letters.filter((l) => l.type === type).length
            expect(mine.reduce((sum, a) => sum + a.sinceLastAlert, 0)).toBe(total)
          }
        },
      ),
      { numRuns: 100, timeout: 5000 },
    )
  })
})
