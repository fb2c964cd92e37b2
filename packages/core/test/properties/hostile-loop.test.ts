/**
 * Hostile handlers, listeners and options against I1 and I2 (issue 12), on virtual time.
 *
 * - Workload: 1–60 messages on colliding keys, priorities, idempotency keys, some delayed; each
 *   attempt of a handler returns, sleeps, throws or rejects a hostile value, returns a thenable that
 *   breaks the contract, posts a follow-up (before or after its deadline) or commits and then throws;
 *   listeners on many events throw hostile values. Random workers, capacity, overflow policy, retry
 *   policy, deadline, queue, aging and breakers; stopped draining, with a random deadline, or without
 *   draining. Then I1 (every accepted id has exactly one outcome, the counters and gauges add up, the
 *   side table is empty, `stop()` resolved) and I2 (a key's attempts never overlap; among equal
 *   priority a key's messages start in post order), and every listener ran on every emit.
 * - Options: createLoop / post / tryPost / postDelayed / on / route / router.on / stop given typos,
 *   wrong types, throwing Proxies and throwing getters either work or throw a Flowing error naming
 *   the option, and a refused call changes nothing.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  describeValue,
  FlowingError,
  InvalidArgumentError,
  isFlowingError,
  type Loop,
  type Router,
  UnknownMessageTypeError,
  UnknownRouteError,
  VirtualClock,
} from '../../src/index.js'
import { ended, thrown, virtualLoop } from '../fixtures.js'
import { throwingProxy } from '../hostile.js'
import { flush, PROPERTY_TIMEOUT_MS } from './harness.js'
import { build, type Mutation, mutationArb, SURFACES, type Surface } from './hostile-options.js'
import { type Observed, OUTCOMES, runHostile } from './hostile-run.js'
import { endingArb, listenersArb, setupArb, specsArb } from './hostile-workload.js'

/** I1 over one run: outcomes by id, counters, gauges, the side table and the stop. */
function checkI1(o: Observed): void {
  expect(o.stopped, 'stop() resolved').toBe(true)
  const c = o.counters
  if (c === undefined) throw new Error('no counters')
  const owner = new Map<string, string>()
  for (const outcome of OUTCOMES) {
    for (const id of o.outcomes[outcome]) {
      const before = owner.get(id)
      expect(before, `${id}: ${outcome} after ${before}`).toBeUndefined()
      owner.set(id, outcome)
    }
  }
  expect([...owner.keys()].sort()).toEqual([...o.accepted].sort())
  expect(new Map([...o.finished].sort()), 'one finished per message, with its outcome').toEqual(
    new Map([...owner].sort()),
  )
  expect(c.accepted).toBe(o.accepted.size)
  expect(ended(c)).toBe(c.accepted)
  expect(c.succeeded).toBe(o.outcomes.succeeded.length)
  expect(c.deadLettered).toBe(o.outcomes['dead-lettered'].length)
  expect(c.dropped).toBe(o.outcomes.dropped.length)
  expect(c.cancelled).toBe(o.outcomes.cancelled.length)
  expect(c.snapshotted).toBe(o.outcomes.snapshotted.length)
  expect(c.posted).toBe(o.calls)
  expect(c.posted).toBe(c.accepted + c.rejected)
  expect(o.sideTableSize).toBe(0)
  expect(o.gauges).toMatchObject({ queued: 0, running: 0, retrying: 0, held: 0, delayed: 0, overdue: 0 })
}

/** I2's order half: among equal priority, a key's messages posted at once start in post order. */
function checkPostOrder(o: Observed): void {
  const started = o.immediate.filter((m) => m.key !== undefined && o.firstStart.has(m.id))
  for (const a of started) {
    for (const b of started) {
      if (a.key !== b.key || a.priority !== b.priority || a.seq >= b.seq) continue
      const first = o.firstStart.get(a.id) as number
      const second = o.firstStart.get(b.id) as number
      expect(first < second, `key ${a.key}: ${a.id} (seq ${a.seq}) started after ${b.id} (seq ${b.seq})`).toBe(true)
    }
  }
}

/** Every listener after a throwing one ran; every value a listener threw was re-thrown, once. */
function checkListeners(o: Observed): void {
  for (const [event, calls] of o.listenerCalls) {
    expect(calls, `calls per listener of '${event}'`).toEqual(calls.map(() => calls[0]))
  }
  const rethrown = [...o.rethrown]
  for (const value of o.thrownByListeners) {
    const at = rethrown.findIndex((e) => Object.is(e, value))
    expect(at, 'a listener error was re-thrown').toBeGreaterThanOrEqual(0)
    rethrown.splice(at, 1)
  }
  expect(rethrown.length, 'errors re-thrown that no listener threw').toBe(0)
}

interface Probe {
  w: number
  r: number
}

/** A loop that accepts and runs nothing (`autoStart: false`), so what a post leaves stays visible. */
function quietLoop(clock: VirtualClock): Loop<Probe> {
  const loop = createLoop<Probe>({ clock, logger: false, autoStart: false })
  loop.on('w', () => {})
  return loop
}

/** What a refused call must not have changed. */
function footprint(loop: Loop<Probe>) {
  const { counters, gauges } = loop.metrics()
  return {
    accepted: counters.accepted,
    queued: loop.queued,
    delayed: gauges.delayed,
    sideTable: loop.sideTableSize,
    state: loop.state,
  }
}

/** Calls `surface` with the built options; returns what it threw (`undefined`: it worked). */
function call(surface: Surface, loop: Loop<Probe>, router: Router<Probe, 'r', string>, options: unknown): unknown {
  const any = options as never
  try {
    if (surface === 'createLoop') createLoop(any)
    else if (surface === 'post') loop.post('w', 1, any)
    else if (surface === 'tryPost') loop.tryPost('w', 1, any)
    else if (surface === 'postDelayed') loop.postDelayed('w', 1, 5, any)
    else if (surface === 'on') loop.on('r', () => {}, any)
    else if (surface === 'route') loop.route('r', () => 'x', any).on('x', () => {})
    else if (surface === 'router.on') router.on('x', () => {}, any)
    else void loop.stop(any).then(undefined, () => {})
  } catch (error) {
    return error ?? new Error(`threw ${describeValue(error)}`)
  }
  return undefined
}

/** Either it worked, or a Flowing error naming the option came back and nothing was done. */
function checkRefusal(surface: Surface, mutation: Mutation): void {
  const clock = new VirtualClock()
  const loop = quietLoop(clock)
  // router.on gets a router of its own type; the others register `r` themselves
  const router = surface === 'router.on' ? loop.route('r', () => 'x') : (undefined as never)
  const built = build(surface, mutation, surface === 'createLoop' ? { clock, logger: false } : {})
  const before = footprint(loop)
  const error = call(surface, loop, router, built.options)
  const after = footprint(loop)
  const { counters } = loop.metrics()
  expect(counters.posted).toBe(counters.accepted + counters.rejected)
  if (error === undefined) return
  expect(isFlowingError(error), `threw ${describeValue(error)}`).toBe(true)
  expect(error).toBeInstanceOf(FlowingError)
  expect(typeof (error as FlowingError).code).toBe('string')
  expect((error as Error).message).toContain(`\`${built.names}`)
  expect(after).toEqual(before)
  // Nothing half-registered, no idempotency key left claimed: the clean call works now.
  if (surface === 'createLoop' || surface === 'stop') {
    expect(loop.post('w', 1).id).toBeTypeOf('string')
    return
  }
  if (surface === 'on' || surface === 'route') {
    expect(() => loop.post('r', 1)).toThrow(UnknownMessageTypeError)
    loop.route('r', () => 'x').on('x', () => {})
  }
  if (surface === 'router.on') {
    expect(() => loop.post('r', 1)).toThrow(UnknownRouteError)
    router.on('x', () => {})
  }
  const clean = { key: 'a', idempotencyKey: 'idem' }
  const accepted = loop.metrics().counters.accepted
  if (surface === 'postDelayed') loop.postDelayed('w', 1, 5, clean)
  else loop.post(surface === 'post' || surface === 'tryPost' ? 'w' : 'r', 1, clean)
  expect(loop.metrics().counters.accepted).toBe(accepted + 1)
}

const OBJECT_OPTIONS = new Set([
  'retry',
  'circuitBreaker',
  'timeoutBreaker',
  'deadLetters',
  'alerts',
  'idempotency',
  'backpressure',
  'stall',
  'failureExit',
  'messageLog',
])

describe('Loop', () => {
  describe('hostile handlers and listeners (property)', () => {
    it(
      'keeps I1 and I2 whatever handlers throw, return or post and whatever listeners throw',
      async () => {
        await fc.assert(
          fc.asyncProperty(specsArb, setupArb, endingArb, listenersArb, async (specs, setup, ending, listeners) => {
            const o = await runHostile(specs, setup, ending, listeners)
            expect(o.violations).toEqual([])
            checkI1(o)
            checkPostOrder(o)
            checkListeners(o)
          }),
          { numRuns: 120 },
        )
      },
      PROPERTY_TIMEOUT_MS,
    )
  })

  describe('hostile options (property)', () => {
    it(
      'either works or throws a Flowing error naming the option, and a refusal changes nothing',
      () => {
        const cases = fc.tuple(fc.constantFrom(...SURFACES), mutationArb)
        fc.assert(
          fc.property(cases, ([surface, m]) => checkRefusal(surface, m)),
          { numRuns: 500 },
        )
      },
      PROPERTY_TIMEOUT_MS,
    )
  })

  // Bugs the generators found (each failed before its fix; kept as regression tests).
  describe('bugs found by the generators', () => {
    it('bug 1a (fixed): stop({ drain: false }) drops a running handler’s deadline, so one that never settles keeps its message without an outcome and stop() pending', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, timeoutMs: 5 })
      loop.on('work', () => new Promise(() => {}))
      loop.post('work', 1)
      await clock.advance(1)
      let stopped = false
      void loop.stop({ drain: false }).then(() => {
        stopped = true
      })
      await clock.run()
      await flush()
      expect(ended(loop.metrics().counters)).toBe(1) // got 0: the attempt never times out
      expect(stopped).toBe(true) // got false, forever
    })

    it('bug 1b (fixed): stop({ drain: false }) drops a running handler’s deadline, so a completion after it counts as a success', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, timeoutMs: 5 })
      loop.on('work', () => clock.sleep(50))
      loop.post('work', 1)
      await clock.advance(1)
      const stopped = loop.stop({ drain: false })
      await clock.run()
      await stopped
      expect(loop.metrics().counters).toMatchObject({ timedOut: 1, succeeded: 0 }) // got timedOut 0, succeeded 1 at t = 50
    })

    it.each([...OBJECT_OPTIONS])(
      'bug 2: createLoop({ %s: <a Proxy whose traps throw> }) lets the trap’s plain Error escape',
      (key) => {
        const error = thrown(() => createLoop({ [key]: throwingProxy({}) }))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect(error.message).toContain(`\`options.${key}`)
      },
    )

    it('bug 2 (fixed): createLoop({ retry: { get maxAttempts() { throw … } } }) lets the getter’s Error escape', () => {
      const retry = Object.defineProperty({}, 'maxAttempts', { enumerable: true, get: () => thrower() })
      expect(thrown(() => createLoop({ retry }))).toBeInstanceOf(InvalidArgumentError)
    })

    it('bug 3 (fixed): on(type, h, { breaker: <a Proxy whose traps throw> }) lets the trap’s plain Error escape', () => {
      const { loop } = virtualLoop()
      expect(thrown(() => loop.on('work', () => {}, { breaker: throwingProxy({}) }))).toBeInstanceOf(
        InvalidArgumentError,
      )
    })

    it.each([
      ['a Proxy whose traps throw', () => throwingProxy({})],
      [
        'a throwing `drain` getter',
        () => Object.defineProperty({}, 'drain', { enumerable: true, get: () => thrower() }),
      ],
      ['a `signal` that is a Proxy whose traps throw', () => ({ signal: throwingProxy({}) })],
    ])('bug 4: stop(%s) throws the plain Error synchronously', (_name, make) => {
      const { loop } = virtualLoop()
      const error = thrown(() => void loop.stop(make() as never))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(loop.state).toBe('running')
    })

    it('bug 5 (fixed): post(type, p, { get key() { throw … } }) names `options`, not `options.key`', () => {
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      const options = Object.defineProperty({}, 'key', { enumerable: true, get: () => thrower() })
      const error = thrown(() => loop.post('work', 1, options))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain('`options.key`') // got 'Expected `options` to be a readable option …'
    })

    it('bug 6 (fixed): on(type, h, { retry: { maxAttempts: Symbol() } }) reports an unreadable `options`, not a wrong maxAttempts', () => {
      const { loop } = virtualLoop()
      const error = thrown(() => loop.on('work', () => {}, { retry: { maxAttempts: Symbol('s') as never } }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain('`options.retry.maxAttempts`') // got '`options` to be a readable option', cause a TypeError
    })
  })
})

function thrower(): never {
  throw new Error('getter')
}
