/**
 * BRIEF I1 — nothing is lost silently. Random interleavings of post / tryPost / send (with timeouts
 * and aborts), handler follow-ups, time, resize, pause/resume, re-entrant calls from inside handlers,
 * and up to two stop() calls at random moments (drained, cancelled, or a drain escalated to a cancel).
 * A reference model predicts each admission decision from the state the caller saw.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  FlowingError,
  type HandlerContext,
  HopLimitError,
  type Loop,
  LoopStoppedError,
  type OverflowPolicy,
  QueueFullError,
  SendAbortedError,
  SendTimeoutError,
  VirtualClock,
} from '../../src/index.js'
import {
  advanceArb,
  agingArb,
  flush,
  type Jobs,
  jobOf,
  optionsOf,
  type PostSpec,
  PROPERTY_TIMEOUT_MS,
  type Produce,
  policyArb,
  produceArb,
  queueKindArb,
  Recorder,
  runJob,
  type SyncCommand,
  syncCommandArb,
  type ValueOf,
  type Via,
} from './harness.js'

/** Synchronous commands, plus `stop()`: from the test, or re-entrantly from inside a handler. */
type Direct = SyncCommand | { readonly kind: 'stop'; readonly drain: boolean }

type Command =
  | Direct
  | { readonly kind: 'advance'; readonly ms: number }
  /** The next handler to start runs `action` synchronously before doing its job. */
  | { readonly kind: 'reenter'; readonly action: Direct }

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 15, arbitrary: syncCommandArb },
  { weight: 4, arbitrary: advanceArb },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reenter' as const),
      action: fc.oneof(syncCommandArb, fc.record({ kind: fc.constant('stop' as const), drain: fc.boolean() })),
    }),
  },
)

/**
 * A command list with up to two `stop()` calls (drained or not) at random moments: a second
 * `stop({ drain: false })` escalates a draining stop.
 */
const scriptArb: fc.Arbitrary<Command[]> = fc
  .tuple(
    fc.array(commandArb, { minLength: 1, maxLength: 60, size: 'medium' }),
    fc.array(fc.record({ at: fc.nat(), drain: fc.boolean() }), { maxLength: 2 }),
  )
  .map(([commands, stops]) => {
    const script: Command[] = [...commands]
    for (const stop of stops) script.splice(stop.at % (script.length + 1), 0, { kind: 'stop', drain: stop.drain })
    return script
  })

const setupArb = fc.record({
  capacity: fc.integer({ min: 1, max: 6 }),
  workers: fc.integer({ min: 1, max: 3 }),
  overflow: policyArb,
  agingMs: agingArb,
  queue: queueKindArb,
  maxHops: fc.constantFrom(0, 16),
  autoStart: fc.boolean(),
  // Tiny budgets make the pool yield between starts, another source of interleavings.
  dispatchBudget: fc.constantFrom(1, 2, 1024),
  maxWaiting: fc.constantFrom(1, 3, 10_000),
})

/** What the caller must see, predicted from the state just before the call. */
type Expected = 'stopped' | 'full' | 'wait' | 'admit' | 'drop-new' | 'drop-oldest-lowest'

/**
 * @param drainingAdmits - a draining `stop()` still admits this post: it is a handler's follow-up
 * (`ctx.tryPost`) and the stop drains (follow-ups belong to the work being drained)
 */
function predict(
  loop: Loop<Jobs>,
  limits: { readonly capacity: number; readonly maxWaiting: number },
  overflow: OverflowPolicy,
  via: Via | 'follow-up',
  drainingAdmits = false,
): Expected {
  const { capacity, maxWaiting } = limits
  if (via === 'send' && loop.metrics().gauges.waitingProducers >= maxWaiting) return 'full'
  if (loop.state === 'stopped' || (loop.state === 'draining' && !drainingAdmits)) return 'stopped'
  if (loop.queued < capacity) return 'admit'
  if (overflow === 'wait') return via === 'send' ? 'wait' : 'full'
  if (overflow === 'reject') return 'full'
  return overflow
}

/** The refusal error a prediction calls for. */
function refusalMatches(expected: Expected, error: unknown): boolean {
  if (!(error instanceof FlowingError)) return false
  if (expected === 'stopped') return error instanceof LoopStoppedError
  if (expected === 'full') return error instanceof QueueFullError
  if (expected === 'wait')
    return error instanceof SendTimeoutError || error instanceof SendAbortedError || error instanceof LoopStoppedError
  return false
}

/** The test's own ledger: every producer call and how the caller learned its fate. */
class Ledger {
  calls = 0
  refusals = 0
  pendingSends = 0
  readonly accepted = new Set<string>()
  readonly violations: string[] = []

  accept(id: string, what: string): void {
    if (this.accepted.has(id)) this.violations.push(`${what}: id ${id} accepted twice`)
    this.accepted.add(id)
  }

  refuse(expected: Expected, error: unknown, what: string): void {
    this.refusals++
    if (!refusalMatches(expected, error)) this.violations.push(`${what}: expected ${expected}, got ${String(error)}`)
  }
}

/** One scenario: the loop under test, the test's ledger and the event recorder. */
class ConservationRun {
  readonly #setup: ValueOf<typeof setupArb>
  readonly #clock = new VirtualClock()
  readonly #loop: Loop<Jobs>
  readonly #recorder: Recorder
  readonly #ledger = new Ledger()
  readonly #controllers: AbortController[] = []
  // How stop() was asked to end (a later `drain: false` escalates): are follow-ups admitted while draining?
  #stopDrains: boolean | undefined
  // send() calls that must have settled by the end of the current command.
  readonly #mustSettle: [{ done: boolean }, string][] = []
  // Re-entrant actions waiting for the next handler start, with the command index that queued them.
  readonly #hooks: [Direct, number][] = []

  constructor(setup: ValueOf<typeof setupArb>) {
    this.#setup = setup
    this.#loop = createLoop<Jobs>({ ...setup, clock: this.#clock })
    this.#recorder = new Recorder(this.#loop)
    this.#loop.on('job', (msg, ctx) => {
      const hook = this.#hooks.shift()
      if (hook !== undefined) this.#execute(hook[0], hook[1])
      if (msg.payload.followUp) this.#followUp(ctx)
      return runJob(this.#clock, msg.payload, () => {})
    })
  }

  async run(commands: readonly Command[]): Promise<void> {
    for (const [i, c] of commands.entries()) {
      if (c.kind === 'advance') await this.#clock.advance(c.ms)
      else if (c.kind === 'reenter') this.#hooks.push([c.action, i])
      else this.#execute(c, i)
      await flush()
      this.#checkInFlight(`after command ${i} (${c.kind})`)
    }
    // Come to rest: run what can run, then stop (draining) and let the last handlers finish.
    const loop = this.#loop
    if (loop.state === 'created' || loop.state === 'paused') loop.start()
    await this.#clock.run()
    this.#stopDrains ??= true
    const stopped = loop.stop()
    await this.#clock.run()
    await stopped
    await flush()
    this.#assertAtRest()
  }

  #execute(c: Direct, i: number): void {
    const loop = this.#loop
    switch (c.kind) {
      case 'post':
        this.#post(c, i)
        break
      case 'resize':
        loop.resize(c.workers)
        break
      case 'pause':
      case 'resume': {
        const stopping = loop.state === 'draining' || loop.state === 'stopped'
        try {
          loop[c.kind]()
          if (stopping) this.#ledger.violations.push(`${c.kind}() #${i} worked on a ${loop.state} loop`)
        } catch (error) {
          if (!stopping || !(error instanceof LoopStoppedError))
            this.#ledger.violations.push(`${c.kind}() #${i}: ${String(error)}`)
        }
        break
      }
      case 'abort':
        this.#controllers[c.pick % Math.max(1, this.#controllers.length)]?.abort(new Error('test abort'))
        break
      case 'stop':
        this.#stopDrains = this.#stopDrains === undefined ? c.drain : this.#stopDrains && c.drain
        void loop.stop({ drain: c.drain })
        break
    }
  }

  #post(c: Produce, tag: number): void {
    this.#ledger.calls++
    const expected = predict(this.#loop, this.#setup, c.spec.overflow ?? this.#setup.overflow, c.via)
    const what = `${c.via} #${tag} (expected ${expected})`
    if (c.via === 'post') this.#postSync(c.spec, tag, expected, what)
    else if (c.via === 'tryPost') this.#tryPost(c.spec, tag, expected, what)
    else this.#send(c, tag, expected, what)
  }

  #postSync(spec: PostSpec, tag: number, expected: Expected, what: string): void {
    const ledger = this.#ledger
    try {
      const m = this.#loop.post('job', jobOf(spec, tag), optionsOf(spec))
      ledger.accept(m.id, what)
      if (expected === 'drop-new' && this.#recorder.outcomes.get(m.id)?.[0] !== 'dropped')
        ledger.violations.push(`${what}: not dropped`)
      if (expected === 'stopped' || expected === 'full') ledger.violations.push(`${what}: admitted`)
    } catch (error) {
      ledger.refuse(expected, error, what)
    }
  }

  #tryPost(spec: PostSpec, tag: number, expected: Expected, what: string): void {
    const ledger = this.#ledger
    const r = this.#loop.tryPost('job', jobOf(spec, tag), optionsOf(spec))
    if (r.ok || r.status === 'dropped') {
      ledger.accept(r.message.id, what)
      // Under drop-oldest-lowest the newcomer itself is dropped when everything ready is more urgent.
      const dropOk = expected === 'drop-new' || (expected === 'drop-oldest-lowest' && r.status === 'dropped')
      if (dropOk !== (r.status === 'dropped')) ledger.violations.push(`${what}: got ${r.status}`)
    } else {
      ledger.refuse(expected, r.error, what)
      if (r.status !== (expected === 'stopped' ? 'stopped' : 'full')) ledger.violations.push(`${what}: ${r.status}`)
    }
  }

  #send(c: Produce, tag: number, expected: Expected, what: string): void {
    const ledger = this.#ledger
    const controller = c.abortable ? new AbortController() : undefined
    if (controller !== undefined) this.#controllers.push(controller)
    ledger.pendingSends++
    // Unless it has to wait, the producer learns its fate at once: before any virtual time passes.
    const settled = { done: false }
    if (expected !== 'wait') this.#mustSettle.push([settled, what])
    const options = optionsOf(c.spec, { signal: controller?.signal, waitTimeoutMs: c.timeoutMs })
    this.#loop.send('job', jobOf(c.spec, tag), options).then(
      (m) => {
        settled.done = true
        ledger.pendingSends--
        ledger.accept(m.id, what)
        if (expected === 'stopped' || expected === 'full') ledger.violations.push(`${what}: admitted`)
      },
      (error: unknown) => {
        settled.done = true
        ledger.pendingSends--
        ledger.refuse(expected, error, what)
      },
    )
  }

  #followUp(ctx: HandlerContext<Jobs>): void {
    const ledger = this.#ledger
    const job = { latency: 1, failure: 'none', followUp: false, tag: -1 } as const
    ledger.calls++
    if (this.#setup.maxHops === 0) {
      try {
        ctx.tryPost('job', job)
        ledger.violations.push('follow-up beyond maxHops was not refused')
      } catch (error) {
        ledger.refusals++
        if (!(error instanceof HopLimitError)) ledger.violations.push(`hop limit: got ${String(error)}`)
      }
      return
    }
    const expected = predict(this.#loop, this.#setup, this.#setup.overflow, 'follow-up', this.#stopDrains === true)
    const result = ctx.tryPost('job', job)
    if (result.ok || result.status === 'dropped') ledger.accept(result.message.id, 'follow-up')
    else ledger.refuse(expected, result.error, 'follow-up')
  }

  // Mid-run balance: what is not yet decided is exactly what waits, queues or runs.
  #checkInFlight(when: string): void {
    const violations = this.#ledger.violations
    const { counters: c, gauges: g } = this.#loop.metrics()
    if (c.posted !== this.#ledger.calls) violations.push(`${when}: posted ${c.posted} ≠ calls ${this.#ledger.calls}`)
    if (c.posted !== c.accepted + c.rejected + g.waitingProducers)
      violations.push(`${when}: posted ≠ accepted + rejected + waiting ${JSON.stringify(c)} ${g.waitingProducers}`)
    const ended = c.succeeded + c.failed + c.dropped + c.cancelled
    if (c.accepted !== ended + g.queued + g.running)
      violations.push(`${when}: accepted ≠ outcomes + queued + running ${JSON.stringify({ ...c, ...g })}`)
    for (const [settled, what] of this.#mustSettle.splice(0)) {
      if (!settled.done) violations.push(`${what}: still pending ${when}`)
    }
  }

  #assertAtRest(): void {
    const ledger = this.#ledger
    const recorder = this.#recorder
    expect(ledger.violations).toEqual([])
    expect(recorder.violations).toEqual([])
    expect(ledger.pendingSends).toBe(0)
    const { counters: c, gauges: g } = this.#loop.metrics()
    expect(g).toMatchObject({ queued: 0, running: 0, waitingProducers: 0 })
    expect(c.posted).toBe(ledger.calls)
    expect(c.posted).toBe(c.accepted + c.rejected)
    expect(c.accepted).toBe(c.succeeded + c.failed + c.dropped + c.cancelled)
    expect(c.accepted).toBe(ledger.accepted.size)
    expect(c.rejected).toBe(ledger.refusals)
    expect(recorder.rejectedEvents).toBe(c.rejected)
    // Exactly one outcome event per accepted id, and none for anything else.
    for (const id of ledger.accepted) expect(recorder.outcomes.get(id), `outcomes of ${id}`).toHaveLength(1)
    expect([...recorder.outcomes.keys()].filter((id) => !ledger.accepted.has(id))).toEqual([])
    const count = (o: string): number => [...recorder.outcomes.values()].filter((list) => list[0] === o).length
    const { succeeded, failed, dropped, cancelled } = c
    expect({
      succeeded: count('succeeded'),
      failed: count('failed'),
      dropped: count('dropped'),
      cancelled: count('cancelled'),
    }).toEqual({ succeeded, failed, dropped, cancelled })
  }
}

function runScenario(setup: ValueOf<typeof setupArb>, commands: readonly Command[]): Promise<void> {
  return new ConservationRun(setup).run(commands)
}

describe('Loop', () => {
  describe('invariant I1 (nothing is lost silently)', () => {
    it('gives every accepted message exactly one outcome and every refused post a typed error, across random interleavings', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      await fc.assert(fc.asyncProperty(setupArb, scriptArb, runScenario), { numRuns: 200 })
    })

    it('keeps the counters balanced when stop({ drain: false }) cancels a backlog mid-run', {
      timeout: PROPERTY_TIMEOUT_MS,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(
          setupArb,
          fc.array(produceArb, { minLength: 1, maxLength: 12 }),
          fc.integer({ min: 0, max: 30 }),
          async (setup, posts, at) => {
            await runScenario({ ...setup, autoStart: true }, [
              ...posts,
              { kind: 'advance', ms: at },
              { kind: 'stop', drain: false },
              ...posts,
            ])
          },
        ),
        { numRuns: 100 },
      )
    })
  })
})
