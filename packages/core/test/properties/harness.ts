/**
 * Shared pieces of the property tests: the job payload and its handler, generators for the commands
 * every invariant test interleaves, a reference urgency order, and an event recorder that models what
 * waits and which keys are busy from the loop's own events.
 *
 * Checks made inside event listeners or handlers are collected as violation strings and asserted at the
 * end of a run: the loop re-throws a listener's error on a later microtask (and a handler's error
 * becomes a `failed` outcome), so an `expect` there would surface far from the step that broke.
 */
import fc from 'fast-check'
import type {
  Loop,
  Message,
  MessageKey,
  OverflowPolicy,
  PriorityLevel,
  SendOptions,
  VirtualClock,
} from '../../src/index.js'

/** How a job ends: returns, throws (sync, or inside its promise), or returns a rejected promise. */
export type Failure = 'none' | 'throw' | 'reject'

/** The payload of every test message. */
export interface Job {
  /** Virtual milliseconds the handler takes; 0 runs it synchronously. */
  readonly latency: number
  readonly failure: Failure
  /** The handler posts one follow-up with `ctx.tryPost`. */
  readonly followUp: boolean
  /** Identifies the producer call that posted it (`-1` for follow-ups). */
  readonly tag: number
}

/** Any message type carries a job; tests that need to tell producers apart use one type each. */
export type Jobs = Record<string, Job>

/** A loop message of the tests' map. */
export type JobMessage = Message<Jobs>

/** The error jobs fail with, so a test can tell a job failure from a loop bug. */
export class JobError extends Error {
  override readonly name = 'JobError'
}

/**
 * Runs a job on virtual time: `exit()` is called when the job's work is over, right before it
 * returns or fails, so callers can track what runs.
 */
export function runJob(clock: VirtualClock, job: Job, exit: () => void): unknown {
  if (job.latency === 0) {
    exit()
    if (job.failure === 'throw') throw new JobError('sync throw')
    if (job.failure === 'reject') return Promise.reject(new JobError('rejected promise'))
    return undefined
  }
  if (job.failure === 'reject') {
    return clock.sleep(job.latency).then(() => {
      exit()
      return Promise.reject(new JobError('late rejection'))
    })
  }
  return clock.sleep(job.latency).then(() => {
    exit()
    if (job.failure === 'throw') throw new JobError('async throw')
  })
}

/**
 * Per-property time limit. A property takes well under a second here; the margin is for slow CI
 * machines, and a hang (a lost wake-up, a stuck key) still fails instead of blocking the run.
 */
export const PROPERTY_TIMEOUT_MS = 20_000

/** Lets pending promise callbacks run without moving virtual time. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

// ── generators ─────────────────────────────────────────────────────────────────────────────────────

export const KEYS: readonly MessageKey[] = ['a', 'b', 'c']

/** A key from a small set, or none (keyless). */
export const keyArb: fc.Arbitrary<MessageKey | undefined> = fc.constantFrom<MessageKey | undefined>(undefined, ...KEYS)

/** Any valid priority. */
export const priorityArb: fc.Arbitrary<PriorityLevel> = fc.integer({ min: 0, max: 9 }).map((p) => p as PriorityLevel)

/** Handler latency in virtual ms; 0 (synchronous) is over-represented. */
export const latencyArb: fc.Arbitrary<number> = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 }))

/** Mostly successes, some sync/async throws and rejections. */
export const failureArb: fc.Arbitrary<Failure> = fc.constantFrom<Failure>('none', 'none', 'none', 'throw', 'reject')

export const policyArb: fc.Arbitrary<OverflowPolicy> = fc.constantFrom<OverflowPolicy>(
  'reject',
  'drop-new',
  'drop-oldest-lowest',
  'wait',
)

/**
 * Aging weights: FIFO (0), strict priority (Infinity), small integers (aging matters within a run)
 * and a fraction.
 */
export const agingArb: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, Number.POSITIVE_INFINITY, 0.5),
  fc.integer({ min: 1, max: 40 }),
)

export const queueKindArb: fc.Arbitrary<'levels' | 'heap'> = fc.constantFrom('levels', 'heap')

/** The type of the values an arbitrary generates. */
export type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never

/** What one producer call asks for. */
export interface PostSpec {
  readonly key: MessageKey | undefined
  readonly priority: PriorityLevel
  readonly latency: number
  readonly failure: Failure
  readonly followUp: boolean
  readonly overflow: OverflowPolicy | undefined
}

export const postSpecArb: fc.Arbitrary<PostSpec> = fc.record({
  key: keyArb,
  priority: priorityArb,
  latency: latencyArb,
  failure: failureArb,
  followUp: fc.boolean(),
  overflow: fc.option(policyArb, { nil: undefined }),
})

/** Builds post/send options without writing `undefined` into optional properties. */
export function optionsOf(
  spec: {
    readonly key: MessageKey | undefined
    readonly priority: PriorityLevel
    readonly overflow?: OverflowPolicy | undefined
  },
  extra: { signal?: AbortSignal | undefined; waitTimeoutMs?: number | undefined } = {},
): SendOptions {
  return {
    priority: spec.priority,
    ...(spec.key === undefined ? {} : { key: spec.key }),
    ...(spec.overflow === undefined ? {} : { overflow: spec.overflow }),
    ...(extra.signal === undefined ? {} : { signal: extra.signal }),
    ...(extra.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: extra.waitTimeoutMs }),
  }
}

/** The job a spec describes. */
export function jobOf(spec: PostSpec, tag: number): Job {
  return { latency: spec.latency, failure: spec.failure, followUp: spec.followUp, tag }
}

// ── command scripts ──────────────────────────────────────────────────────────────────────────────

/** The three producer entry points. */
export type Via = 'post' | 'tryPost' | 'send'

/** A producer call; `timeoutMs` and `abortable` matter only to `send`. */
export interface Produce {
  readonly kind: 'post'
  readonly via: Via
  readonly spec: PostSpec
  readonly timeoutMs: number | undefined
  readonly abortable: boolean
}

/** A command that runs synchronously (from the test or, re-entrantly, from inside a handler). */
export type SyncCommand =
  | Produce
  | { readonly kind: 'resize'; readonly workers: number }
  | { readonly kind: 'pause' }
  | { readonly kind: 'resume' }
  /** Aborts the signal of an earlier `send` (picked modulo their number). */
  | { readonly kind: 'abort'; readonly pick: number }

/** A synchronous command, or letting virtual time pass. */
export type Step = SyncCommand | { readonly kind: 'advance'; readonly ms: number }

export const produceArb: fc.Arbitrary<Produce> = fc.record({
  kind: fc.constant('post' as const),
  via: fc.constantFrom<Via>('post', 'tryPost', 'send'),
  spec: postSpecArb,
  timeoutMs: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
  abortable: fc.boolean(),
})

export const syncCommandArb: fc.Arbitrary<SyncCommand> = fc.oneof(
  { weight: 10, arbitrary: produceArb },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('resize' as const), workers: fc.integer({ min: 1, max: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }) },
)

export const advanceArb: fc.Arbitrary<{ readonly kind: 'advance'; readonly ms: number }> = fc.record({
  kind: fc.constant('advance' as const),
  ms: fc.integer({ min: 0, max: 25 }),
})

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 15, arbitrary: syncCommandArb },
  { weight: 4, arbitrary: advanceArb },
)

/** Collects unhandled rejections while `body` runs (every promise a test creates must be handled). */
export async function withUnhandledRejections(body: (seen: unknown[]) => Promise<void>): Promise<void> {
  const seen: unknown[] = []
  const listener = (reason: unknown): void => {
    seen.push(reason)
  }
  process.on('unhandledRejection', listener)
  try {
    await body(seen)
  } finally {
    process.off('unhandledRejection', listener)
  }
}

// ── reference urgency ──────────────────────────────────────────────────────────────────────────────

/**
 * The reference order of BRIEF I3, written from the spec rather than from `Urgency`: rank
 * `postedAt + priority × agingMs` (or just `priority` when aging is off), then post order.
 */
export function referenceCompare(agingMs: number): (a: JobMessage, b: JobMessage) => number {
  const rank = (m: JobMessage): number =>
    agingMs === Number.POSITIVE_INFINITY ? m.priority : m.postedAt + m.priority * agingMs
  return (a, b) => {
    const ra = rank(a)
    const rb = rank(b)
    if (ra !== rb) return ra < rb ? -1 : 1
    return a.seq - b.seq
  }
}

/** Short form of a message for counterexample output. */
export function show(m: JobMessage): string {
  return `#${m.seq}(p${m.priority}${m.key === undefined ? '' : ` k=${m.key}`} t=${m.postedAt})`
}

// ── event recorder ─────────────────────────────────────────────────────────────────────────────────

/** The outcome events of BRIEF I1. */
export type Outcome = 'succeeded' | 'failed' | 'dropped' | 'cancelled'

/**
 * Models the loop from its events: which messages wait, which keys run, every outcome per message id.
 * Listeners are attached first, so the model is current when a test's own listeners run.
 */
export class Recorder {
  /** Admitted, not yet started or dropped/cancelled, by id. */
  readonly waiting = new Map<string, JobMessage>()
  /** Keys with a running handler, and how many (more than one is an I2 violation). */
  readonly busy = new Map<MessageKey, number>()
  /** Messages in start order. */
  readonly started: JobMessage[] = []
  /** Outcome events per message id. */
  readonly outcomes = new Map<string, Outcome[]>()
  /** Ids seen in `posted` events. */
  readonly posted = new Set<string>()
  /** Count of `rejected` events. */
  rejectedEvents = 0
  readonly violations: string[] = []

  constructor(loop: Loop<Jobs>) {
    loop.events.on('posted', (m) => {
      if (this.posted.has(m.id)) this.violations.push(`posted twice: ${show(m)}`)
      this.posted.add(m.id)
      this.waiting.set(m.id, m)
    })
    loop.events.on('rejected', () => {
      this.rejectedEvents++
    })
    loop.events.on('started', (m) => {
      if (!this.waiting.delete(m.id)) this.violations.push(`started but not waiting: ${show(m)}`)
      this.started.push(m)
      if (m.key !== undefined) this.busy.set(m.key, (this.busy.get(m.key) ?? 0) + 1)
    })
    const finished = (m: JobMessage, outcome: Outcome): void => {
      if (m.key !== undefined) {
        const n = (this.busy.get(m.key) ?? 0) - 1
        if (n <= 0) this.busy.delete(m.key)
        else this.busy.set(m.key, n)
      }
      this.#outcome(m, outcome)
    }
    loop.events.on('succeeded', (m) => finished(m, 'succeeded'))
    loop.events.on('failed', (m) => finished(m, 'failed'))
    loop.events.on('dropped', (m) => {
      this.waiting.delete(m.id)
      this.#outcome(m, 'dropped')
    })
    loop.events.on('cancelled', (m) => {
      if (!this.waiting.delete(m.id)) this.violations.push(`cancelled but not waiting: ${show(m)}`)
      this.#outcome(m, 'cancelled')
    })
  }

  /** Whether `m` could run now: keyless, or its key is free. */
  runnable(m: JobMessage): boolean {
    return m.key === undefined || !this.busy.has(m.key)
  }

  #outcome(m: JobMessage, outcome: Outcome): void {
    const list = this.outcomes.get(m.id)
    if (list === undefined) this.outcomes.set(m.id, [outcome])
    else list.push(outcome)
  }
}
