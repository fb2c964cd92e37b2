/**
 * Flow control as properties, on virtual time: rate limits × keys × retries × `RateLimitError`
 * of every scope (no window ever sees more than `max` handler entries, also when a `started` listener takes time, per-key order and one-at-a-time hold, a 429 never
 * consumes an attempt), key groups (never more than N of a group at once), and cancel / request
 * (each message one outcome and one `finished`, each request settled once and as its outcome says) —
 * also when a group's released message is cancelled before it starts (drain still ends).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  type Loop,
  type Message,
  type MessageKey,
  RateLimitError,
  RequestFailedError,
  type RetryAfterScope,
  RetryableError,
} from '../../src/index.js'
import { BusyClock, ended, overWindow } from '../fixtures.js'
import type { ValueOf } from './harness.js'

type Failure = 'none' | 'throw' | 'reject' | '429'
interface Task {
  readonly n: number
  readonly group: string | undefined
  readonly latency: number
  readonly failure: Failure
  readonly retryAfterMs: number
  readonly scope: RetryAfterScope
}
type Tasks = { limited: Task; free: Task }

const KEYS = [undefined, 'a', 'b', 7] as const
const taskSpec = fc.record({
  type: fc.constantFrom<'limited' | 'free'>('limited', 'limited', 'free'),
  key: fc.constantFrom<MessageKey | undefined>(...KEYS),
  group: fc.constantFrom<string | undefined>(undefined, 'g1', 'g2'),
  latency: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 12 })),
  failure: fc.constantFrom<Failure>('none', 'none', 'none', 'throw', 'reject', '429'),
  retryAfterMs: fc.integer({ min: 0, max: 25 }),
  scope: fc.constantFrom<RetryAfterScope>('route', 'key', 'group'),
})
type Spec = ValueOf<typeof taskSpec>
type Step =
  | { readonly kind: 'post'; readonly spec: Spec; readonly via: 'post' | 'request' | 'signal' }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'cancel'; readonly pick: number; readonly how: 'id' | 'message' | 'signal' }
  // At the next end of a grouped message: cancel the first of its group not started yet — the one its
  // end just released for the free slot, or one still waiting in the group's lane.
  | { readonly kind: 'cancel-released'; readonly how: 'id' | 'message' | 'signal' }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('post' as const),
      spec: taskSpec,
      via: fc.constantFrom('post' as const, 'request' as const, 'signal' as const),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('cancel' as const),
      pick: fc.nat(),
      how: fc.constantFrom('id' as const, 'message' as const, 'signal' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('cancel-released' as const),
      how: fc.constantFrom('id' as const, 'message' as const, 'signal' as const),
    }),
  },
)
const limitArb = fc.record({ max: fc.integer({ min: 1, max: 3 }), perMs: fc.integer({ min: 1, max: 30 }) })
const configArb = fc.record({
  workers: fc.integer({ min: 1, max: 4 }),
  typeLimit: fc.option(limitArb, { nil: undefined }),
  keyLimit: fc.option(limitArb, { nil: undefined }),
  loopLimit: fc.option(fc.record({ max: fc.integer({ min: 2, max: 6 }), perMs: fc.integer({ min: 1, max: 20 }) }), {
    nil: undefined,
  }),
  groupConcurrency: fc.integer({ min: 1, max: 3 }),
  groupLimit: fc.option(limitArb, { nil: undefined }),
  // What a `started` listener spends (a busy-wait on the clock) before some handlers are called.
  startedBusyMs: fc.option(fc.integer({ min: 1, max: 25 }), { nil: undefined }),
})
type Config = ValueOf<typeof configArb>

// Whether `p` settled by the next real turn (the virtual clock ran dry: nothing is left to wait for).
const settles = (p: Promise<unknown>): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))])

class Run {
  readonly clock = new BusyClock()
  readonly loop: Loop<Tasks>
  readonly violations: string[] = []
  readonly starts = new Map<string, number[]>() // budget → start times
  readonly running = new Map<MessageKey, number>()
  readonly groupRunning = new Map<string, number>()
  readonly posted: Message<Tasks>[] = []
  readonly controllers = new Map<string, AbortController>()
  readonly attempts = new Map<string, number>()
  readonly failures = new Map<string, number>() // ordinary failures (not 429) per message
  readonly finished = new Map<string, number>()
  readonly outcome = new Map<string, string>()
  readonly lastStarted = new Map<MessageKey, number>()
  readonly requests = new Map<string, { settled: number; value?: unknown; error?: unknown }>()
  readonly started = new Set<string>()
  // Armed `cancel-released` steps, fired by the next grouped message's end.
  readonly armed: ('id' | 'message' | 'signal')[] = []

  constructor(readonly config: Config) {
    const { typeLimit, keyLimit, loopLimit, groupConcurrency, groupLimit } = config
    this.loop = createLoop<Tasks>({
      clock: this.clock,
      logger: false,
      workers: config.workers,
      retry: { maxAttempts: 3, baseMs: 1, capMs: 5, order: 'ordered' },
      ...(loopLimit === undefined ? {} : { rateLimit: loopLimit }),
      groups: { concurrency: groupConcurrency, ...(groupLimit === undefined ? {} : { rateLimit: groupLimit }) },
    })
    const limits = [
      ...(typeLimit === undefined ? [] : [{ ...typeLimit, per: 'type' as const }]),
      ...(keyLimit === undefined ? [] : [{ ...keyLimit, per: 'key' as const }]),
    ]
    this.loop.on('limited', (m, ctx) => this.handle(m, ctx.signal), limits.length === 0 ? {} : { rateLimit: limits })
    this.loop.on('free', (m, ctx) => this.handle(m, ctx.signal))
    const busy = config.startedBusyMs
    if (busy !== undefined) this.loop.events.on('started', (m) => this.clock.burn((m.payload.n % 3) * busy))
    this.loop.events.on('finished', (m, s) => {
      this.finished.set(m.id, (this.finished.get(m.id) ?? 0) + 1)
      this.outcome.set(m.id, s.outcome)
      const how = m.payload.group === undefined ? undefined : this.armed.shift()
      if (how !== undefined) this.cancelNextOf(m.payload.group as string, how)
    })
  }

  // Cancels the first posted message of `group` that has neither started nor ended.
  cancelNextOf(group: string, how: 'id' | 'message' | 'signal'): void {
    const next = this.posted.find(
      (p) => p.payload.group === group && !this.started.has(p.id) && !this.finished.has(p.id),
    )
    if (next !== undefined) this.cancelMessage(next, how)
  }

  handle(m: Message<Tasks>, _signal: unknown): unknown {
    const now = this.clock.now()
    const group = m.payload.group
    this.started.add(m.id)
    this.record(m, group, now)
    const task = m.payload
    const attempt = (this.attempts.get(m.id) ?? 0) + 1
    this.attempts.set(m.id, attempt)
    if (attempt === 1 && m.key !== undefined) {
      // One priority level: a key's messages start in post order, across retries and 429s.
      const last = this.lastStarted.get(m.key) ?? -1
      if (task.n < last) this.violations.push(`key ${String(m.key)}: #${task.n} started after #${last}`)
      this.lastStarted.set(m.key, task.n)
    }
    if (m.key !== undefined) {
      if ((this.running.get(m.key) ?? 0) > 0) this.violations.push(`key ${String(m.key)} ran twice at ${now}`)
      this.running.set(m.key, 1)
    }
    if (group !== undefined) {
      const n = (this.groupRunning.get(group) ?? 0) + 1
      this.groupRunning.set(group, n)
      if (n > this.config.groupConcurrency) this.violations.push(`group ${group} ran ${n} at ${now}`)
    }
    const exit = () => {
      if (m.key !== undefined) this.running.set(m.key, 0)
      if (group !== undefined) this.groupRunning.set(group, (this.groupRunning.get(group) ?? 1) - 1)
    }
    const fail = (): unknown => {
      if (task.failure === '429' && attempt === 1)
        throw new RateLimitError('429', { retryAfterMs: task.retryAfterMs, scope: task.scope })
      if (task.failure === 'throw' || task.failure === '429') {
        this.failures.set(m.id, (this.failures.get(m.id) ?? 0) + 1)
        throw new RetryableError('boom')
      }
      if (task.failure === 'reject') {
        this.failures.set(m.id, (this.failures.get(m.id) ?? 0) + 1)
        return Promise.reject(new RetryableError('rejected'))
      }
      return task.n
    }
    if (task.latency === 0) {
      exit()
      return fail()
    }
    return this.clock.sleep(task.latency).then(() => {
      exit()
      return fail()
    })
  }

  record(m: Message<Tasks>, group: string | undefined, now: number): void {
    const add = (budget: string) => {
      const list = this.starts.get(budget) ?? []
      list.push(now)
      this.starts.set(budget, list)
    }
    add('loop')
    if (m.type === 'limited') {
      add('type')
      if (m.key !== undefined) add(`key:${typeof m.key}:${String(m.key)}`)
    }
    if (group !== undefined) add(`group:${group}`)
  }

  post(spec: Spec, via: 'post' | 'request' | 'signal', n: number): void {
    const task: Task = {
      n,
      group: spec.group,
      latency: spec.latency,
      failure: spec.failure,
      retryAfterMs: spec.retryAfterMs,
      scope: spec.scope,
    }
    const controller = new AbortController()
    const options = {
      ...(spec.key === undefined ? {} : { key: spec.key }),
      ...(spec.group === undefined ? {} : { group: spec.group }),
      ...(via === 'signal' ? { signal: controller.signal } : {}),
    }
    if (via === 'request') {
      const pending = { settled: 0 } as { settled: number; value?: unknown; error?: unknown }
      this.requests.set(`r${n}`, pending)
      this.loop.request(spec.type, task, options).then(
        (value) => {
          pending.settled++
          pending.value = value
        },
        (error: unknown) => {
          pending.settled++
          pending.error = error
        },
      )
      return
    }
    const m = this.loop.post(spec.type, task, options)
    this.posted.push(m)
    this.controllers.set(m.id, controller)
  }

  cancel(pick: number, how: 'id' | 'message' | 'signal'): void {
    if (this.posted.length === 0) return
    this.cancelMessage(this.posted[pick % this.posted.length] as Message<Tasks>, how)
  }

  cancelMessage(m: Message<Tasks>, how: 'id' | 'message' | 'signal'): void {
    if (how === 'id') this.loop.cancel(m.id)
    else if (how === 'message') this.loop.cancel(m)
    else this.controllers.get(m.id)?.abort('gave up')
  }

  async play(steps: readonly Step[]): Promise<void> {
    let n = 0
    for (const step of steps) {
      if (step.kind === 'post') this.post(step.spec, step.via, n++)
      else if (step.kind === 'cancel') this.cancel(step.pick, step.how)
      else if (step.kind === 'cancel-released') this.armed.push(step.how)
      else await this.clock.advance(step.ms)
    }
  }

  checkWindows(): void {
    const { typeLimit, keyLimit, loopLimit, groupLimit } = this.config
    for (const [budget, times] of this.starts) {
      const limit =
        budget === 'loop'
          ? loopLimit
          : budget === 'type'
            ? typeLimit
            : budget.startsWith('key:')
              ? keyLimit
              : groupLimit
      if (limit === undefined) continue
      const over = overWindow(times, limit.max, limit.perMs)
      if (over !== undefined) this.violations.push(`${budget}: ${over}`)
    }
  }
}

describe('Loop', () => {
  describe('flow control (properties)', () => {
    it('never exceeds a rate limit in any window, keeps keys one at a time, groups within N, and ends every message once', {
      timeout: 60_000,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(configArb, fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (config, steps) => {
          const run = new Run(config)
          await run.play(steps)
          await run.clock.run()
          // drain() ends: no group's lane waits for a slot that nothing holds (a cancelled release).
          const drained = run.loop.drain()
          await run.clock.run()
          expect(await settles(drained)).toBe(true)
          const { counters, gauges } = run.loop.metrics()
          run.checkWindows()
          expect(run.violations).toEqual([])
          // I1: every accepted message ended once, with one `finished`.
          expect(ended(counters)).toBe(counters.accepted)
          expect(run.finished.size).toBe(counters.accepted)
          for (const times of run.finished.values()) expect(times).toBe(1)
          expect(gauges).toMatchObject({ queued: 0, limited: 0, grouped: 0, running: 0 })
          // A 429 never consumed an attempt: ordinary failures ≤ maxAttempts, and a dead letter had all 3.
          for (const letter of run.loop.deadLetters.list()) {
            expect(letter.attempts.length).toBe(3)
            expect(run.failures.get(letter.id)).toBe(3)
          }
          // Each request settled exactly once; a success carries the handler's value, a failure the
          // handler's own error (the caller's: not dead-lettered), any other end a RequestFailedError.
          for (const r of run.requests.values()) {
            expect(r.settled).toBe(1)
            if (r.error === undefined) expect(typeof r.value).toBe('number')
            else if (!(r.error instanceof RetryableError)) expect(r.error).toBeInstanceOf(RequestFailedError)
          }
          const failedRequests = [...run.requests.values()].filter((r) => r.error instanceof RetryableError)
          expect(counters.requestFailed).toBe(failedRequests.length)
          expect(run.loop.sideTableSize).toBe(0)
        }),
        { numRuns: 150 },
      )
    })

    it('hands back limited, grouped and paused messages at a stop, each exactly once, and restores them', {
      timeout: 60_000,
    }, async () => {
      const stopArb = fc.constantFrom({ drain: false }, { deadlineMs: 0 }, { deadlineMs: 15 })
      await fc.assert(
        fc.asyncProperty(
          configArb,
          fc.array(stepArb, { minLength: 1, maxLength: 30 }),
          stopArb,
          async (config, steps, how) => {
            const run = new Run(config)
            await run.play(steps)
            const stopping = run.loop.stop(how)
            await run.clock.run()
            const snapshot = await stopping
            const { counters } = run.loop.metrics()
            expect(ended(counters)).toBe(counters.accepted)
            expect(snapshot.messages.length).toBe(counters.snapshotted)
            for (const times of run.finished.values()) expect(times).toBe(1)
            for (const r of run.requests.values()) expect(r.settled).toBe(1)
            run.checkWindows()
            expect(run.violations).toEqual([])
            const next = new Run(config)
            expect(next.loop.restore(snapshot)).toBe(snapshot.messages.length)
            await next.clock.run()
            await next.loop.drain()
            const after = next.loop.metrics().counters
            expect(after.succeeded + after.deadLettered + after.cancelled).toBe(snapshot.messages.length)
          },
        ),
        { numRuns: 100 },
      )
    })
  })
})
