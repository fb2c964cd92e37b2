/**
 * BRIEF I4 — bounded, for producers: those waiting in `send()` (the `wait` policy) are admitted by
 * priority then arrival, exactly once, with no lost wake-up when others time out or abort, never beyond
 * `maxWaiting`, and with no unhandled rejection.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  FlowingError,
  type Loop,
  LoopStoppedError,
  QueueFullError,
  SendAbortedError,
  SendTimeoutError,
  VirtualClock,
} from '../../src/index.js'
import {
  failureArb,
  flush,
  type JobMessage,
  type Jobs,
  jobOf,
  keyArb,
  optionsOf,
  type PostSpec,
  PROPERTY_TIMEOUT_MS,
  runJob,
  withUnhandledRejections,
} from './harness.js'

// ── the gauge bound, every policy ──────────────────────────────────────────────────────────────────

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
    const options = optionsOf(c.spec, { signal: controller?.signal, waitTimeoutMs: c.timeoutMs })
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
        const sent = loop.send('job', job, { waitTimeoutMs: -5 })
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
