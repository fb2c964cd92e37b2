/**
 * Runs one hostile workload (see `hostile-workload.ts`) on virtual time and records what I1 and I2
 * are checked against: the ids every producer call got back, the ids of each outcome event, each
 * attempt's start and end as the loop reports them (`started` → `succeeded` / `failed`) and as the
 * handlers live them, every listener's call count, and what the loop re-threw from listeners.
 *
 * Checks that must hold at a precise moment (a key started while busy) are collected as violation
 * strings and asserted at the end: an `expect` inside a listener would be re-thrown on a microtask,
 * far from the step that broke.
 */
import {
  createLoop,
  describeValue,
  FencedError,
  type FinishedSummary,
  type HandlerContext,
  isFlowingError,
  type Loop,
  type LoopCounters,
  type LoopGauges,
  type LoopOptions,
  type LoopSnapshot,
  type Message,
  type PostOptions,
  type StopOptions,
  VirtualClock,
} from '../../src/index.js'
import { catchRethrown } from '../fixtures.js'
import { flush } from './harness.js'
import {
  type Behaviour,
  type Ending,
  LISTENED,
  type Listened,
  type ListenerPlan,
  type Misbehaviour,
  type Setup,
  type Spec,
} from './hostile-workload.js'

export interface HostileJobs {
  job: { readonly index: number }
  follow: { readonly ms: number }
}

type AnyMessage = Message<HostileJobs>

/** The outcomes of BRIEF I1, the snapshot's included. */
export const OUTCOMES = ['succeeded', 'dead-lettered', 'dropped', 'cancelled', 'snapshotted'] as const
export type Outcome = (typeof OUTCOMES)[number]

/** What a run leaves to check. */
export interface Observed {
  readonly violations: string[]
  /** Ids producer calls (`post`, `tryPost`, `postDelayed`, `ctx.post`) got back: the accepted messages. */
  readonly accepted: Set<string>
  /** Producer calls that reached the loop (a fenced `ctx.post` is refused before it does). */
  calls: number
  readonly outcomes: Record<Outcome, string[]>
  /** Each message's `finished` outcome (its last event). */
  readonly finished: Map<string, string>
  /** Messages posted at once (not delayed): what post order is checked on. */
  readonly immediate: AnyMessage[]
  /** Index of each message's first `started` event. */
  readonly firstStart: Map<string, number>
  /** Per listened event: the recording listener's call count, then each planned listener's. */
  readonly listenerCalls: Map<Listened, number[]>
  readonly thrownByListeners: unknown[]
  rethrown: unknown[]
  stopped: boolean
  counters: LoopCounters | undefined
  gauges: LoopGauges | undefined
  sideTableSize: number
}

/** Attempts whose handler has not finished, as the handlers see it. */
interface Executing {
  readonly id: string
  readonly key: string | number | undefined
  /** The loop recorded the attempt's end (`succeeded`, `failed` — a timeout included). */
  loopEnded: boolean
}

function observed(): Observed {
  return {
    violations: [],
    accepted: new Set(),
    calls: 0,
    outcomes: { succeeded: [], 'dead-lettered': [], dropped: [], cancelled: [], snapshotted: [] },
    finished: new Map(),
    immediate: [],
    firstStart: new Map(),
    listenerCalls: new Map(),
    thrownByListeners: [],
    rethrown: [],
    stopped: false,
    counters: undefined,
    gauges: undefined,
    sideTableSize: -1,
  }
}

function loopOptions(clock: VirtualClock, s: Setup): LoopOptions {
  return {
    clock,
    logger: false,
    random: () => 0.5,
    workers: s.workers,
    capacity: s.capacity,
    overflow: s.overflow,
    queue: s.queue,
    agingMs: s.agingMs,
    retry: { maxAttempts: s.maxAttempts, unknownMaxAttempts: s.maxAttempts, baseMs: 5, order: s.order },
    circuitBreaker: s.breaker,
    timeoutBreaker: s.timeoutBreaker ? { threshold: 2, cooldownMs: 20 } : false,
    // Below `workers`: handlers that never settle may each keep a slot, and one must stay free.
    ...(s.timeoutMs === undefined
      ? {}
      : { timeoutMs: s.timeoutMs, graceMs: s.graceMs, maxZombies: s.zombiePick % s.workers }),
  }
}

/** One run: builds the loop, posts the specs, stops as `ending` says, runs the clock out. */
export async function runHostile(
  specs: readonly Spec[],
  setup: Setup,
  ending: Ending,
  listeners: ReadonlyMap<Listened, readonly ListenerPlan[]>,
): Promise<Observed> {
  const o = observed()
  const rethrown = catchRethrown()
  try {
    const clock = new VirtualClock()
    const loop = createLoop<HostileJobs>(loopOptions(clock, setup))
    const never: NeverSettles = setup.timeoutMs === undefined ? 'calls-twice' : 'never-settles'
    const run = new Run(o, clock, loop, never)
    run.listen(listeners)
    loop.on('job', (m, ctx) => run.behave(m, ctx, specs[m.payload.index] as Spec))
    loop.on('follow', (m) => run.follow(m))
    for (const [index, spec] of specs.entries()) {
      if (spec.gap > 0) await clock.advance(spec.gap)
      run.produce(index, spec)
    }
    if (ending.settleMs > 0) await clock.advance(ending.settleMs)
    const options: StopOptions =
      ending.mode === 'drain' ? {} : ending.mode === 'abort' ? { drain: false } : { deadlineMs: ending.deadlineMs }
    let snapshot: LoopSnapshot | undefined
    loop.stop(options).then(
      (s) => {
        snapshot = s
        o.stopped = true
      },
      (error) => o.violations.push(`stop() rejected: ${describeValue(error)}`),
    )
    await clock.run()
    await flush()
    await flush()
    for (const m of snapshot?.messages ?? []) o.outcomes.snapshotted.push(m.id)
    const metrics = loop.metrics()
    o.counters = metrics.counters
    o.gauges = metrics.gauges
    o.sideTableSize = loop.sideTableSize
  } finally {
    rethrown.restore()
  }
  o.rethrown = rethrown.errors
  return o
}

/** What a handler's thenable that never settles does in a run (see `Run.#never`). */
type NeverSettles = 'never-settles' | 'calls-twice' | 'settles-late'

class Run {
  readonly #o: Observed
  readonly #clock: VirtualClock
  readonly #loop: Loop<HostileJobs>
  // What a thenable that never settles becomes: without a deadline it would hang the drain for good
  // (it calls back twice instead). With one it really never settles, under every kind of stop (a stop
  // without drain used to drop the deadline and wait forever: bug 1, fixed).
  readonly #never: NeverSettles
  // Keys with an attempt the loop counts as running (between `started` and its end event).
  readonly #active = new Map<string | number, string>()
  readonly #executing = new Set<Executing>()
  #starts = 0

  constructor(o: Observed, clock: VirtualClock, loop: Loop<HostileJobs>, never: NeverSettles) {
    this.#o = o
    this.#clock = clock
    this.#loop = loop
    this.#never = never
  }

  /** The recording listener first on every event, then the planned ones, each counting its calls. */
  listen(plans: ReadonlyMap<Listened, readonly ListenerPlan[]>): void {
    for (const event of LISTENED) {
      const calls = [0]
      this.#o.listenerCalls.set(event, calls)
      this.#loop.events.on(event, ((...args: unknown[]) => {
        calls[0] = (calls[0] as number) + 1
        this.#record(event, args)
      }) as never)
      for (const [i, plan] of (plans.get(event) ?? []).entries()) {
        calls.push(0)
        this.#loop.events.on(event, (() => {
          const n = (calls[i + 1] as number) + 1
          calls[i + 1] = n
          if (plan.every > 0 && n % plan.every === 0) {
            const value = plan.value.make()
            this.#o.thrownByListeners.push(value)
            throw value
          }
        }) as never)
      }
    }
  }

  #record(event: Listened, args: unknown[]): void {
    const m = args[0] as AnyMessage
    this.#afterFinished(event, args)
    if (event === 'started') this.#started(m)
    else if (event === 'succeeded' || event === 'failed') this.#attemptEnded(m)
    if (event === 'succeeded' || event === 'dead-lettered' || event === 'dropped' || event === 'cancelled') {
      this.#o.outcomes[event].push(m.id)
    }
    if ((event === 'posted' || event === 'scheduled') && !this.#o.accepted.has(m.id)) {
      // Producer calls add their id when they return: a `posted` event fires before that, so check at the end.
      queueMicrotask(() => {
        if (!this.#o.accepted.has(m.id)) this.#o.violations.push(`${event} ${m.id}, which no producer got back`)
      })
    }
  }

  // `finished` is each message's last event, once, after its outcome's own.
  #afterFinished(event: Listened, args: unknown[]): void {
    const m = args[0] as AnyMessage | undefined
    if (typeof m !== 'object' || m === null || !('id' in m)) return
    const done = this.#o.finished.get(m.id)
    if (done !== undefined) this.#o.violations.push(`${event} of ${m.id} after its finished (${done})`)
    if (event !== 'finished') return
    const summary = args[1] as FinishedSummary
    this.#o.finished.set(m.id, summary.outcome)
    // (`snapshotted` and `request-failed` have no event of their own; no request is made here)
    const own = summary.outcome === 'snapshotted' || summary.outcome === 'request-failed'
    if (!own && !this.#o.outcomes[summary.outcome].includes(m.id)) {
      this.#o.violations.push(`finished ${m.id} (${summary.outcome}) before its ${summary.outcome} event`)
    }
    if (!(summary.lifecycleMs >= 0) || !(summary.attempts >= 0)) {
      this.#o.violations.push(`finished ${m.id}: lifecycle ${summary.lifecycleMs}, attempts ${summary.attempts}`)
    }
  }

  // I2 as the loop reports it: a key's attempts, from `started` to their end event, never overlap.
  #started(m: AnyMessage): void {
    if (!this.#o.firstStart.has(m.id)) this.#o.firstStart.set(m.id, this.#starts)
    this.#starts++
    if (m.key === undefined) return
    const holder = this.#active.get(m.key)
    if (holder !== undefined) this.#o.violations.push(`${m.id} started on key ${m.key} while ${holder} ran`)
    this.#active.set(m.key, m.id)
  }

  #attemptEnded(m: AnyMessage): void {
    for (const e of this.#executing) if (e.id === m.id) e.loopEnded = true
    if (m.key === undefined) return
    if (this.#active.get(m.key) === m.id) this.#active.delete(m.key)
    else this.#o.violations.push(`${m.id} ended on key ${m.key} without running (${this.#active.get(m.key)} runs)`)
  }

  // I2 as the handlers live it: no handler starts while one of its key runs that the loop has not ended.
  #enter(m: AnyMessage): Executing {
    if (m.key !== undefined) {
      for (const e of this.#executing) {
        if (e.key === m.key && !e.loopEnded) this.#o.violations.push(`handler of ${m.id} entered while ${e.id} ran`)
      }
    }
    const e: Executing = { id: m.id, key: m.key, loopEnded: false }
    this.#executing.add(e)
    return e
  }

  #exit(e: Executing): void {
    this.#executing.delete(e)
  }

  produce(index: number, spec: Spec): void {
    const options: PostOptions = {
      priority: spec.priority,
      ...(spec.key === undefined ? {} : { key: spec.key }),
      ...(spec.idempotencyKey === undefined ? {} : { idempotencyKey: spec.idempotencyKey }),
    }
    this.#o.calls++
    try {
      if (spec.delayMs > 0) {
        this.#o.accepted.add(this.#loop.postDelayed('job', { index }, spec.delayMs, options).message.id)
      } else if (spec.via === 'post') {
        this.#accept(this.#loop.post('job', { index }, options))
      } else {
        const result = this.#loop.tryPost('job', { index }, options)
        if (result.status === 'queued' || result.status === 'dropped') this.#accept(result.message)
      }
    } catch (error) {
      if (!isFlowingError(error)) this.#o.violations.push(`a post threw a non-Flowing error: ${describeValue(error)}`)
    }
  }

  #accept(m: AnyMessage): void {
    this.#o.accepted.add(m.id)
    this.#o.immediate.push(m)
  }

  follow(m: Message<HostileJobs, 'follow'>): unknown {
    const e = this.#enter(m as AnyMessage)
    if (m.payload.ms === 0) return this.#exit(e)
    return this.#clock.sleep(m.payload.ms).then(() => this.#exit(e))
  }

  behave(m: Message<HostileJobs, 'job'>, ctx: HandlerContext<HostileJobs>, spec: Spec): unknown {
    const b = spec.attempts[Math.min(ctx.attempt, spec.attempts.length) - 1] as Behaviour
    const e = this.#enter(m as AnyMessage)
    const exit = () => this.#exit(e)
    switch (b.kind) {
      case 'return':
        return exit()
      case 'sleep':
        return this.#clock.sleep(b.ms).then(exit)
      case 'throw':
        exit()
        throw b.value.make()
      case 'reject':
        return this.#clock.sleep(b.ms).then(() => {
          exit()
          return Promise.reject(b.value.make())
        })
      case 'thenable': {
        const how = b.how === 'never-settles' ? this.#never : b.how
        if (how === 'settles-late') return this.#clock.sleep(200).then(exit)
        return misbehaving(how, b.value, exit)
      }
      case 'follow-up':
        if (b.ms === 0) {
          exit()
          return this.#followUp(ctx, b)
        }
        return this.#clock.sleep(b.ms).then(() => {
          exit()
          this.#followUp(ctx, b)
        })
      case 'commit-throw':
        ctx.commit(m.payload.index)
        exit()
        throw b.value.make()
    }
  }

  // A follow-up through `ctx.post`: after the attempt's deadline it must be fenced, and is not a post.
  #followUp(ctx: HandlerContext<HostileJobs>, b: Extract<Behaviour, { kind: 'follow-up' }>): void {
    const options: PostOptions = { priority: b.priority, ...(b.key === undefined ? {} : { key: b.key }) }
    try {
      this.#o.calls++
      this.#accept(ctx.post('follow', { ms: b.priority }, options) as AnyMessage)
    } catch (error) {
      if (error instanceof FencedError) this.#o.calls--
      else if (!isFlowingError(error))
        this.#o.violations.push(`ctx.post threw a non-Flowing error: ${describeValue(error)}`)
    }
  }
}

/** A thenable that breaks the contract as `how` says; `exit` marks the end of the handler's work. */
function misbehaving(how: Misbehaviour, value: { make(): unknown }, exit: () => void): unknown {
  switch (how) {
    case 'then-getter-throws':
      return Object.defineProperty({}, 'then', {
        get() {
          exit()
          throw value.make()
        },
      })
    case 'then-throws':
      return {
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        then() {
          exit()
          throw value.make()
        },
      }
    case 'calls-both':
      return {
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
          exit()
          resolve('first')
          reject(value.make())
        },
      }
    case 'calls-twice':
      return {
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
          exit()
          resolve(1)
          resolve(2)
          reject(value.make())
        },
      }
    case 'never-settles':
      // biome-ignore lint/suspicious/noThenProperty: the thenable under test
      return { then() {} }
  }
}
