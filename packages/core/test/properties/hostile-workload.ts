/**
 * Generators for the hostile-loop property (issue 12): a workload whose handlers misbehave per
 * attempt — hostile throws and rejections, thenables that break the Promises/A+ contract, follow-ups
 * posted before and after a deadline, a commit followed by a throw — under random loop options, with
 * listeners that throw hostile values on the loop's events.
 *
 * Thrown values are recipes ({@link Thrown}): fast-check prints and clones what it generates, and a
 * hostile value would break fast-check itself, so the value is built inside the run.
 */
import fc from 'fast-check'
import type { LoopEvents, OverflowPolicy, PriorityLevel } from '../../src/index.js'
import { hostileOrAnything, type Thrown } from '../hostile.js'

/** How a thenable returned by a handler breaks the contract. */
export type Misbehaviour = 'then-getter-throws' | 'then-throws' | 'calls-both' | 'calls-twice' | 'never-settles'

/** What one attempt of a handler does. */
export type Behaviour =
  | { readonly kind: 'return' }
  | { readonly kind: 'sleep'; readonly ms: number }
  | { readonly kind: 'throw'; readonly value: Thrown }
  | { readonly kind: 'reject'; readonly ms: number; readonly value: Thrown }
  | { readonly kind: 'thenable'; readonly how: Misbehaviour; readonly value: Thrown }
  /** `ctx.post` of a follow-up after `ms` (past a deadline it must be fenced), then returns. */
  | {
      readonly kind: 'follow-up'
      readonly ms: number
      readonly key: string | undefined
      readonly priority: PriorityLevel
    }
  | { readonly kind: 'commit-throw'; readonly value: Thrown }

/** One producer call. */
export interface Spec {
  readonly key: string | undefined
  readonly priority: PriorityLevel
  readonly idempotencyKey: string | undefined
  /** 0: posted at once; otherwise `postDelayed` by this much. */
  readonly delayMs: number
  /** Virtual ms that pass before this post. */
  readonly gap: number
  readonly via: 'post' | 'tryPost'
  /** Attempt n follows `attempts[min(n, length) - 1]`. */
  readonly attempts: readonly Behaviour[]
}

/** The loop options a run draws. */
export interface Setup {
  readonly workers: number
  readonly capacity: number
  readonly overflow: OverflowPolicy
  readonly maxAttempts: number
  readonly order: 'ordered' | 'unordered'
  readonly timeoutMs: number | undefined
  readonly graceMs: number
  /** Picked below `workers` when a deadline applies, so handlers that never settle leave a slot. */
  readonly zombiePick: number
  readonly timeoutBreaker: boolean
  readonly queue: 'levels' | 'heap'
  readonly agingMs: number
  readonly breaker: false | true | { readonly consecutiveFailures: number; readonly cooldownMs: number }
}

/** How the run ends. */
export interface Ending {
  readonly mode: 'drain' | 'deadline' | 'abort'
  /** Virtual ms between the last post and `stop()`. */
  readonly settleMs: number
  readonly deadlineMs: number
}

/** One listener after the recording one: it counts every call and throws on every `every`-th (0: never). */
export interface ListenerPlan {
  readonly every: 0 | 1 | 2 | 3
  readonly value: Thrown
}

/** The events the hostile listeners sit on. */
export const LISTENED = [
  'posted',
  'scheduled',
  'rejected',
  'started',
  'succeeded',
  'failed',
  'retrying',
  'requeued',
  'dead-lettered',
  'held',
  'dropped',
  'cancelled',
  'committed',
  'idle',
  'drained',
  'state',
  'circuit',
  'timeout-breaker',
  'zombies',
  'signature',
  'finished',
] as const satisfies readonly (keyof LoopEvents)[]

export type Listened = (typeof LISTENED)[number]

const KEYS = [undefined, 'a', 'b', 'c'] as const
const priorityArb = fc.constantFrom<PriorityLevel>(0, 5, 5, 9)
const thrownArb = hostileOrAnything()

const behaviourArb: fc.Arbitrary<Behaviour> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'return' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('sleep' as const), ms: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('throw' as const), value: thrownArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reject' as const),
      ms: fc.integer({ min: 0, max: 20 }),
      value: thrownArb,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('thenable' as const),
      how: fc.constantFrom<Misbehaviour>(
        'then-getter-throws',
        'then-throws',
        'calls-both',
        'calls-twice',
        'never-settles',
      ),
      value: thrownArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('follow-up' as const),
      ms: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })),
      key: fc.constantFrom(...KEYS),
      priority: priorityArb,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('commit-throw' as const), value: thrownArb }) },
)

export const specArb: fc.Arbitrary<Spec> = fc.record({
  key: fc.constantFrom(...KEYS, 'a'),
  priority: priorityArb,
  idempotencyKey: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('i1', 'i2', 'i3', 'i4', 'i5', 'i6') },
  ),
  delayMs: fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }) },
  ),
  gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 8 })),
  via: fc.constantFrom('post' as const, 'tryPost' as const),
  attempts: fc.array(behaviourArb, { minLength: 1, maxLength: 3 }),
})

/** 1–60 producer calls, their count spread over the whole range. */
export const specsArb: fc.Arbitrary<readonly Spec[]> = fc.array(specArb, { minLength: 1, maxLength: 60, size: 'max' })

export const setupArb: fc.Arbitrary<Setup> = fc.record({
  workers: fc.integer({ min: 1, max: 4 }),
  capacity: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constant(10_000)),
  overflow: fc.constantFrom<OverflowPolicy>('reject', 'drop-new', 'drop-oldest-lowest', 'wait'),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  order: fc.constantFrom('ordered' as const, 'unordered' as const),
  timeoutMs: fc.option(fc.integer({ min: 5, max: 40 }), { nil: undefined }),
  graceMs: fc.constantFrom(0, 1, 10, 5_000),
  zombiePick: fc.nat(),
  timeoutBreaker: fc.boolean(),
  queue: fc.constantFrom('levels' as const, 'heap' as const),
  agingMs: fc.constantFrom(0, 10, 1000, Number.POSITIVE_INFINITY),
  breaker: fc.oneof(
    { weight: 3, arbitrary: fc.constant(false as const) },
    { weight: 1, arbitrary: fc.constant(true as const) },
    {
      weight: 2,
      arbitrary: fc.record({
        consecutiveFailures: fc.integer({ min: 1, max: 3 }),
        cooldownMs: fc.integer({ min: 1, max: 60 }),
      }),
    },
  ),
})

export const endingArb: fc.Arbitrary<Ending> = fc.record({
  mode: fc.constantFrom('drain' as const, 'deadline' as const, 'abort' as const),
  settleMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })),
  deadlineMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 80 })),
})

const listenerArb: fc.Arbitrary<ListenerPlan> = fc.record({
  every: fc.constantFrom<0 | 1 | 2 | 3>(0, 1, 1, 2, 3),
  value: thrownArb,
})

/** Per event, the listeners after the recording one (at least one event gets a throwing listener). */
export const listenersArb: fc.Arbitrary<ReadonlyMap<Listened, readonly ListenerPlan[]>> = fc
  .uniqueArray(
    fc.record({ event: fc.constantFrom(...LISTENED), plans: fc.array(listenerArb, { minLength: 1, maxLength: 3 }) }),
    { selector: (e) => e.event, minLength: 3, maxLength: LISTENED.length },
  )
  .map((entries) => new Map(entries.map((e) => [e.event, e.plans] as const)))
