/**
 * BRIEF I4 — bounded. The `queued` gauge never exceeds the capacity under any overflow policy, and
 * `drop-oldest-lowest` evicts exactly what a reference model says. Producers waiting in `send()`:
 * `send-waiters.test.ts`.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  FlowingError,
  type Loop,
  type OverflowPolicy,
  QueueFullError,
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
      const options = optionsOf(c.spec, { signal: controller?.signal, waitTimeoutMs: c.timeoutMs })
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
  })
})
