/**
 * BRIEF I4 — bounded. The `queued` gauge never exceeds the capacity under any overflow policy;
 * `drop-oldest-lowest` evicts exactly what a reference model says; producers waiting in `send()` are
 * admitted by priority then arrival, exactly once, with no lost wake-up when others time out or abort.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  FlowingError,
  type Loop,
  LoopStoppedError,
  type OverflowPolicy,
  QueueFullError,
  SendAbortedError,
  SendTimeoutError,
  VirtualClock,
} from '../../src/index.js'
import {
  agingArb,
  failureArb,
  flush,
  type JobMessage,
  type Jobs,
  jobOf,
  keyArb,
  latencyArb,
  optionsOf,
  type PostSpec,
  PROPERTY_TIMEOUT_MS,
  type Produce,
  policyArb,
  priorityArb,
  queueKindArb,
  Recorder,
  runJob,
  type Step,
  show,
  stepArb,
  withUnhandledRejections,
} from './harness.js'

// ── the gauge bound, every policy ──────────────────────────────────────────────────────────────────

interface BoundSetup {
  readonly capacity: number
  readonly workers: number
  readonly overflow: OverflowPolicy
  readonly agingMs: number
  readonly queue: 'levels' | 'heap'
}

async function boundScenario(setup: BoundSetup, commands: readonly Step[]): Promise<void> {
  const clock = new VirtualClock()
  const loop = createLoop<Jobs>({ ...setup, clock })
  const violations: string[] = []
  const check = (where: string): void => {
    const { queued, capacity } = loop.metrics().gauges
    if (queued > capacity || loop.queued !== queued) violations.push(`${where}: ${queued}/${capacity} queued`)
  }
  const controllers: AbortController[] = []
  loop.events.on('posted', (m) => check(`posted ${show(m)}`))
  loop.events.on('dropped', (m) => check(`dropped ${show(m)}`))
  loop.on('job', (msg, ctx) => {
    check(`handler of ${show(msg)}`)
    // Follow-ups go through the same admission; they must respect the bound too.
    if (msg.payload.followUp) ctx.tryPost('job', { latency: 1, failure: 'none', followUp: false, tag: -1 })
    return runJob(clock, msg.payload, () => check(`end of ${show(msg)}`))
  })
  const produce = (c: Produce, i: number): void => {
    const job = jobOf(c.spec, i)
    if (c.via === 'tryPost') {
      loop.tryPost('job', job, optionsOf(c.spec))
    } else if (c.via === 'post') {
      try {
        loop.post('job', job, optionsOf(c.spec))
      } catch (error) {
        if (!(error instanceof QueueFullError)) violations.push(`post #${i}: ${String(error)}`)
      }
    } else {
      const controller = c.abortable ? new AbortController() : undefined
      if (controller !== undefined) controllers.push(controller)
      const options = optionsOf(c.spec, { signal: controller?.signal, timeoutMs: c.timeoutMs })
      loop.send('job', job, options).then(
        () => check(`send #${i} resolved`),
        (error: unknown) => {
          if (!(error instanceof FlowingError)) violations.push(`send #${i}: ${String(error)}`)
        },
      )
    }
  }
  for (const [i, c] of commands.entries()) {
    if (c.kind === 'post') produce(c, i)
    else if (c.kind === 'advance') await clock.advance(c.ms)
    else if (c.kind === 'resize') loop.resize(c.workers)
    else if (c.kind === 'pause') loop.pause()
    else if (c.kind === 'resume') loop.resume()
    else controllers[c.pick % Math.max(1, controllers.length)]?.abort(new Error('test abort'))
    check(`after command ${i} (${c.kind})`)
    await flush()
    check(`after command ${i} (${c.kind}) settled`)
  }
  loop.start()
  await clock.run()
  await loop.stop()
  expect(violations).toEqual([])
}

// ── drop-oldest-lowest against a reference model ───────────────────────────────────────────────────

type DropCommand =
  | { readonly kind: 'post'; readonly spec: PostSpec }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'pause' }
  | { readonly kind: 'resume' }

const dropCommandsArb = (keyed: boolean): fc.Arbitrary<DropCommand[]> =>
  fc.array(
    fc.oneof(
      {
        weight: 10,
        arbitrary: fc.record({
          kind: fc.constant('post' as const),
          spec: fc.record({
            key: keyed ? keyArb : fc.constant(undefined),
            priority: priorityArb,
            latency: latencyArb,
            failure: failureArb,
            followUp: fc.constant(false),
            overflow: fc.constant(undefined),
          }),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20 }) }),
      },
      { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
    ),
    { minLength: 1, maxLength: 60, size: 'medium' },
  )

/**
 * What `drop-oldest-lowest` must do when a post finds the queue full. Keyless waiting messages are
 * always in the ready queue (only keyed ones park behind a busy key), so they pin the model down:
 * - victim evicted: it is not more urgent than the newcomer, and no keyless waiting message is less
 *   urgent, or equally urgent and older;
 * - newcomer dropped: no keyless waiting message was as or less urgent than the newcomer.
 * With no keys at all this determines the victim exactly, which is also checked.
 */
function checkEviction(
  before: readonly JobMessage[],
  newcomer: JobMessage,
  dropped: readonly JobMessage[],
  violations: string[],
): void {
  const what = `full post of ${show(newcomer)} with [${before.map(show).join(' ')}]`
  if (dropped.length !== 1) {
    violations.push(`${what}: dropped ${dropped.length} messages`)
    return
  }
  const victim = dropped[0] as JobMessage
  const keyless = before.filter((m) => m.key === undefined)
  if (victim.id === newcomer.id) {
    const wouldDo = keyless.filter((m) => m.priority >= newcomer.priority)
    if (wouldDo.length > 0) violations.push(`${what}: dropped the newcomer although ${wouldDo.map(show)} could go`)
    return
  }
  if (!before.some((m) => m.id === victim.id))
    violations.push(`${what}: evicted ${show(victim)}, which was not waiting`)
  if (victim.priority < newcomer.priority) violations.push(`${what}: evicted more urgent ${show(victim)}`)
  for (const m of keyless) {
    if (m.id === victim.id) continue
    if (m.priority > victim.priority || (m.priority === victim.priority && m.seq < victim.seq))
      violations.push(`${what}: evicted ${show(victim)} instead of ${show(m)}`)
  }
  if (keyless.length === before.length) {
    const lowest = Math.max(...before.map((m) => m.priority))
    const expected = before.filter((m) => m.priority === lowest).sort((a, b) => a.seq - b.seq)[0]
    if (expected?.id !== victim.id)
      violations.push(`${what}: evicted ${show(victim)}, model says ${expected && show(expected)}`)
  }
}

async function dropScenario(
  setup: { capacity: number; workers: number; agingMs: number; queue: 'levels' | 'heap'; autoStart: boolean },
  commands: readonly DropCommand[],
): Promise<void> {
  const clock = new VirtualClock()
  const loop: Loop<Jobs> = createLoop<Jobs>({ ...setup, overflow: 'drop-oldest-lowest', clock })
  const recorder = new Recorder(loop)
  const violations: string[] = []
  let droppedNow: JobMessage[] = []
  loop.events.on('dropped', (m, reason) => {
    droppedNow.push(m)
    // An evicted victim is reported with the policy that evicted it.
    if (recorder.posted.has(m.id) && reason !== 'drop-oldest-lowest')
      violations.push(`victim ${show(m)} dropped with reason ${reason}`)
  })
  loop.on('job', (msg) => runJob(clock, msg.payload, () => {}))
  for (const [i, c] of commands.entries()) {
    if (c.kind === 'post') {
      const full = loop.queued >= setup.capacity
      const before = [...recorder.waiting.values()]
      droppedNow = []
      const m = loop.post('job', jobOf(c.spec, i), optionsOf(c.spec))
      if (full) checkEviction(before, m, droppedNow, violations)
      else if (droppedNow.length > 0) violations.push(`post of ${show(m)} with room dropped ${droppedNow.map(show)}`)
    } else if (c.kind === 'advance') await clock.advance(c.ms)
    else if (c.kind === 'pause') loop.pause()
    else loop.resume()
    if (loop.queued > setup.capacity) violations.push(`after command ${i}: ${loop.queued} queued`)
    await flush()
  }
  loop.start()
  await clock.run()
  await loop.stop()
  expect(violations).toEqual([])
}

// ── send() waiters ─────────────────────────────────────────────────────────────────────────────────

type WaitCommand =
  | {
      readonly kind: 'send'
      readonly spec: PostSpec
      readonly timeoutMs: number | undefined
      readonly abortable: boolean
    }
  | { readonly kind: 'post'; readonly spec: PostSpec }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'abort'; readonly pick: number }
  | { readonly kind: 'resize'; readonly workers: number }
  | { readonly kind: 'pause' }
  | { readonly kind: 'resume' }

const waitSpecArb: fc.Arbitrary<PostSpec> = fc.record({
  key: keyArb,
  priority: fc.constantFrom(0, 1, 2, 9),
  latency: fc.integer({ min: 1, max: 12 }),
  failure: failureArb,
  followUp: fc.constant(false),
  overflow: fc.constant(undefined),
})

const waitCommandsArb: fc.Arbitrary<WaitCommand[]> = fc.array(
  fc.oneof(
    {
      weight: 10,
      arbitrary: fc.record({
        kind: fc.constant('send' as const),
        spec: waitSpecArb,
        timeoutMs: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined, freq: 2 }),
        abortable: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('post' as const), spec: waitSpecArb }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 15 }) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('resize' as const), workers: fc.integer({ min: 1, max: 3 }) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
  ),
  { minLength: 1, maxLength: 80, size: 'medium' },
)

/** The test's model of one `send()` call. */
interface Producer {
  readonly index: number
  readonly priority: number
  readonly sentAt: number
  readonly timeoutMs: number | undefined
  readonly abortable: boolean
  /** `maxWaiting` producers already waited when this one called: it must be refused at once. */
  readonly overLimit: boolean
  state: 'calling' | 'waiting' | 'admitted' | 'refused'
  admittedId: string | undefined
  refusal: Error | undefined
  settled: number
}

interface WaitSetup {
  readonly capacity: number
  readonly workers: number
  readonly maxWaiting: number
  readonly stopAtEnd: boolean
}

/**
 * One `wait`-policy scenario. Each `send()` uses its own message type, so the loop's synchronous
 * `posted` / `rejected` events name the producer they concern and the model is exact at every step.
 */
class WaitRun {
  readonly #setup: WaitSetup
  readonly #clock = new VirtualClock()
  readonly #loop: Loop<Jobs>
  readonly #producers: Producer[] = []
  readonly #controllers: AbortController[] = []
  readonly violations: string[] = []

  constructor(setup: WaitSetup) {
    this.#setup = setup
    const { capacity, workers, maxWaiting } = setup
    this.#loop = createLoop<Jobs>({ capacity, workers, maxWaiting, overflow: 'wait', clock: this.#clock })
    this.#loop.on('job', (msg) => runJob(this.#clock, msg.payload, () => {}))
    this.#loop.events.on('posted', (m) => this.#onAdmitted(m))
    this.#loop.events.on('rejected', (type, error) => this.#onRefused(type, error))
  }

  async run(commands: readonly WaitCommand[]): Promise<void> {
    for (const [i, c] of commands.entries()) {
      await this.#execute(c, i)
      this.#checkRoom(`after command ${i} (${c.kind})`)
      await flush()
      this.#checkRoom(`after command ${i} (${c.kind}) settled`)
    }
    // Either stop with producers still waiting (they must be refused at once), or let the queue drain
    // them in.
    const loop = this.#loop
    if (this.#setup.stopAtEnd) {
      const stopped = loop.stop()
      if (this.#waiting().length > 0) this.violations.push('producers still waiting after stop()')
      await this.#clock.run()
      await stopped
    } else {
      loop.start()
      await this.#clock.run()
      await loop.stop()
    }
    await flush()
  }

  /** Every producer settled exactly once, as admitted or refused. */
  assertSettled(): void {
    expect(this.violations).toEqual([])
    for (const p of this.#producers) {
      expect(p.settled, `send ${p.index} settled`).toBe(1)
      expect(p.state === 'admitted' || p.state === 'refused', `send ${p.index} is ${p.state}`).toBe(true)
    }
    const c = this.#loop.metrics().counters
    expect(c.posted).toBe(c.accepted + c.rejected)
  }

  async #execute(c: WaitCommand, i: number): Promise<void> {
    const loop = this.#loop
    if (c.kind === 'send') this.#send(c, i)
    else if (c.kind === 'post') this.#post(c.spec, i)
    else if (c.kind === 'advance') await this.#clock.advance(c.ms)
    else if (c.kind === 'abort')
      this.#controllers[c.pick % Math.max(1, this.#controllers.length)]?.abort(new Error('test abort'))
    else if (c.kind === 'resize') loop.resize(c.workers)
    else if (c.kind === 'pause') loop.pause()
    else loop.resume()
  }

  #producerOf(type: string): Producer | undefined {
    return type.startsWith('send-') ? this.#producers[Number(type.slice(5))] : undefined
  }

  #waiting(): Producer[] {
    return this.#producers.filter((p) => p.state === 'waiting')
  }

  #onAdmitted(m: JobMessage): void {
    const p = this.#producerOf(m.type)
    if (p === undefined) return
    if (p.state === 'waiting') {
      // Admitted from the waiting room: nobody more urgent (priority, then arrival) may still wait.
      for (const q of this.#waiting()) {
        if (q !== p && (q.priority < p.priority || (q.priority === p.priority && q.index < p.index)))
          this.violations.push(`send ${p.index} (p${p.priority}) admitted before send ${q.index} (p${q.priority})`)
      }
    } else if (p.state !== 'calling') this.violations.push(`send ${p.index} admitted while ${p.state}`)
    p.state = 'admitted'
    p.admittedId = m.id
    if (this.#loop.queued > this.#setup.capacity) this.violations.push(`send ${p.index} admitted over capacity`)
  }

  #onRefused(type: string, error: Error): void {
    const p = this.#producerOf(type)
    if (p === undefined) return
    if (p.state !== 'calling' && p.state !== 'waiting') this.violations.push(`send ${p.index} refused while ${p.state}`)
    // Each refusal has exactly one reason, and the error names it.
    const reason =
      (error instanceof QueueFullError && p.overLimit) ||
      (error instanceof SendTimeoutError && p.timeoutMs !== undefined) ||
      (error instanceof SendAbortedError && p.abortable) ||
      (error instanceof LoopStoppedError && this.#loop.state === 'draining')
    if (!reason || (p.overLimit && !(error instanceof QueueFullError)))
      this.violations.push(`send ${p.index} refused with ${error.name} (${JSON.stringify(p)})`)
    p.state = 'refused'
    p.refusal = error
    // A timeout fires exactly at its deadline: never early, and (virtual time) never late.
    const now = this.#clock.now()
    if (error instanceof SendTimeoutError && now !== p.sentAt + (p.timeoutMs ?? Number.NaN))
      this.violations.push(`send ${p.index} timed out at ${now}, deadline ${p.sentAt}+${p.timeoutMs}`)
  }

  #checkRoom(when: string): void {
    const g = this.#loop.metrics().gauges
    const waiting = this.#waiting().length
    if (g.waitingProducers !== waiting)
      this.violations.push(`${when}: ${g.waitingProducers} producers waiting, model says ${waiting}`)
    // No lost wake-up: a producer waits only while the queue is full.
    if (g.waitingProducers > 0 && g.queued < g.capacity)
      this.violations.push(`${when}: ${g.waitingProducers} waiting with ${g.queued}/${g.capacity} queued`)
    if (g.queued > g.capacity) this.violations.push(`${when}: ${g.queued}/${g.capacity} queued`)
    // Producers are bounded too: memory stays bounded when producers outrun consumers.
    if (g.waitingProducers > this.#setup.maxWaiting)
      this.violations.push(`${when}: ${g.waitingProducers} > ${this.#setup.maxWaiting} waiting`)
  }

  #post(spec: PostSpec, i: number): void {
    const full = this.#loop.queued >= this.#setup.capacity
    try {
      this.#loop.post('job', jobOf(spec, i), optionsOf(spec))
      if (full) this.violations.push(`post #${i} admitted into a full queue`)
    } catch (error) {
      // A synchronous post cannot wait: under `wait` it is refused when full.
      if (!full || !(error instanceof QueueFullError)) this.violations.push(`post #${i}: ${String(error)}`)
    }
  }

  #send(c: Extract<WaitCommand, { kind: 'send' }>, i: number): void {
    const p: Producer = {
      index: this.#producers.length,
      priority: c.spec.priority,
      sentAt: this.#clock.now(),
      timeoutMs: c.timeoutMs,
      abortable: c.abortable,
      overLimit: this.#waiting().length >= this.#setup.maxWaiting,
      state: 'calling',
      admittedId: undefined,
      refusal: undefined,
      settled: 0,
    }
    this.#producers.push(p)
    const type = `send-${p.index}`
    this.#loop.on(type, (msg) => runJob(this.#clock, msg.payload, () => {}))
    const controller = c.abortable ? new AbortController() : undefined
    if (controller !== undefined) this.#controllers.push(controller)
    const options = optionsOf(c.spec, { signal: controller?.signal, timeoutMs: c.timeoutMs })
    const promise = this.#loop.send(type, jobOf(c.spec, i), options)
    if (p.state === 'calling') p.state = 'waiting'
    promise.then(
      (m) => {
        p.settled++
        if (p.state !== 'admitted' || m.id !== p.admittedId)
          this.violations.push(`send ${p.index} resolved while ${p.state}`)
      },
      (error: unknown) => {
        p.settled++
        // The caller gets the very error the `rejected` event reported, and it is typed.
        if (p.state !== 'refused' || error !== p.refusal)
          this.violations.push(`send ${p.index} rejected while ${p.state}: ${String(error)}`)
        if (!(error instanceof FlowingError)) this.violations.push(`send ${p.index} rejected with ${String(error)}`)
      },
    )
  }
}

async function waitScenario(setup: WaitSetup, commands: readonly WaitCommand[], unhandled: unknown[]): Promise<void> {
  const run = new WaitRun(setup)
  await run.run(commands)
  run.assertSettled()
  expect(unhandled).toEqual([])
}

describe('Loop', () => {
  describe('invariant I4 (bounded)', () => {
    it('never holds more than capacity messages, under every overflow policy', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      const setupArb = fc.record({
        capacity: fc.integer({ min: 1, max: 5 }),
        workers: fc.integer({ min: 1, max: 3 }),
        overflow: policyArb,
        agingMs: agingArb,
        queue: queueKindArb,
      })
      const commandsArb = fc.array(stepArb, { minLength: 1, maxLength: 60, size: 'medium' })
      await fc.assert(fc.asyncProperty(setupArb, commandsArb, boundScenario), { numRuns: 150 })
    })

    it('drop-oldest-lowest evicts the oldest least urgent ready message, never one more urgent than the newcomer', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      const setupArb = fc.record({
        capacity: fc.integer({ min: 1, max: 5 }),
        workers: fc.integer({ min: 1, max: 2 }),
        agingMs: agingArb,
        queue: queueKindArb,
        autoStart: fc.boolean(),
      })
      await fc.assert(fc.asyncProperty(setupArb, dropCommandsArb(false), dropScenario), { numRuns: 150 })
      await fc.assert(fc.asyncProperty(setupArb, dropCommandsArb(true), dropScenario), { numRuns: 150 })
    })

    it('admits send() waiters by priority then arrival, each exactly once, none lost when others time out or abort', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      const setupArb = fc.record({
        capacity: fc.integer({ min: 1, max: 3 }),
        workers: fc.integer({ min: 1, max: 2 }),
        maxWaiting: fc.constantFrom(1, 2, 4, 10_000),
        stopAtEnd: fc.boolean(),
      })
      await withUnhandledRejections(async (unhandled) => {
        await fc.assert(
          fc.asyncProperty(setupArb, waitCommandsArb, (setup, commands) => waitScenario(setup, commands, unhandled)),
          { numRuns: 150 },
        )
      })
    })
  })

  describe('send()', () => {
    // Regression: `timeoutMs` (and `signal`) used to be validated only when the producer had to wait,
    // so the same bad call was admitted or refused depending on the queue (I7).
    it('refuses an invalid timeoutMs whether or not the queue has room', async () => {
      const job = { latency: 0, failure: 'none', followUp: false, tag: 0 } as const
      const outcomes: string[] = []
      for (const full of [false, true]) {
        const loop = createLoop<Jobs>({ capacity: 1, overflow: 'wait', autoStart: false, clock: new VirtualClock() })
        loop.on('job', () => undefined)
        if (full) loop.post('job', job)
        const sent = loop.send('job', job, { timeoutMs: -5 })
        outcomes.push(
          await sent.then(
            () => 'admitted',
            (error: unknown) => (error as Error).name,
          ),
        )
      }
      expect(outcomes).toEqual(['InvalidArgumentError', 'InvalidArgumentError'])
    })
  })
})
