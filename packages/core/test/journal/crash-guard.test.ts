/**
 * The crash-loop guard on a journaled loop, with crashes played by `MemoryStore.reopen()` (the old
 * store refuses every later commit, as a dead process writes nothing) on virtual time: a message whose
 * attempts keep ending in a crash is dead-lettered with a `CrashLoopError` after `maxCrashes`, without
 * running again, and what waits behind it on its key then runs in order; an attempt that ended never
 * counts; a restored message's first attempt waits for its start to be committed, so a handler that
 * kills its process at once is counted too. A property test plays random lives against a model.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  CrashLoopError,
  createLoop,
  type Loop,
  type LoopOptions,
  MemoryStore,
  NonRetryableError,
  VirtualClock,
} from '../../src/index.js'
import { SOLO_MS } from '../../src/journal/crash-guard.js'
import { settle } from './journal-fixtures.js'

interface Work {
  job: { n: string }
}

/** One "process": a loop over `store` whose handler of `poison` messages never ends (the crash comes from outside). */
function life(store: MemoryStore, ran: string[], options: LoopOptions = {}, crashIn?: () => void) {
  const clock = new VirtualClock()
  const loop: Loop<Work> = createLoop<Work>({ clock, logger: false, store, workers: 2, ...options })
  loop.on('job', async (m) => {
    ran.push(m.payload.n)
    if (m.payload.n.startsWith('poison')) {
      crashIn?.() // dies at once: nothing after this line commits
      await clock.sleep(3_600_000) // "running" until the process dies
    }
  })
  return { loop, clock }
}

/** A store whose `poison` message was running when its process died (one crash counted at the next start). */
async function crashedOnce(options: LoopOptions = {}): Promise<MemoryStore> {
  const store = new MemoryStore()
  const first = life(store, [], options)
  first.loop.start()
  first.loop.post('job', { n: 'poison' })
  await settle(first.clock)
  await settle(first.clock) // its `running` row is committed
  return store.reopen()
}

describe('the crash-loop guard', () => {
  it('dead-letters a message after maxCrashes interrupted attempts, without running it again; its key then runs', async () => {
    let store = new MemoryStore()
    const ran: string[] = []
    const first = life(store, ran)
    first.loop.start()
    first.loop.post('job', { n: 'poison' }, { key: 'k' })
    first.loop.post('job', { n: 'after-1' }, { key: 'k' })
    first.loop.post('job', { n: 'other' }, { key: 'j' })
    await settle(first.clock)
    await settle(first.clock) // the `running` row is committed
    for (let crash = 1; crash <= 3; crash++) {
      store = store.reopen() // the process died
      const next = life(store, ran)
      next.loop.start()
      await settle(next.clock)
      await settle(next.clock)
      if (crash < 3) continue
      const letters = next.loop.deadLetters.list()
      expect(letters.map((l) => l.payload)).toEqual([{ n: 'poison' }])
      expect(letters[0]?.error.name).toBe('CrashLoopError')
      expect(letters[0]?.error.message).toBe(
        '`job` was running when the process crashed 3 times (maxCrashes 3): dead-lettered without running again (a poison message: its handler kills the process)',
      )
    }
    expect(ran).toEqual(['poison', 'other', 'poison', 'poison', 'after-1'])
  })

  it('counts a handler that kills its process at once, before anything it did could commit', async () => {
    let store = new MemoryStore()
    const ran: string[] = []
    let current = store
    const crash = () => {
      store = current.reopen() // synchronous, at the handler's first line: the old store writes nothing more
    }
    // The first life journals three messages and dies while the first runs: `poison` and `next` come
    // back never having run (not counted yet).
    const first = life(store, ran, { workers: 1 })
    first.loop.on('job', () => new Promise(() => {}), { replace: true })
    first.loop.start()
    first.loop.post('job', { n: 'hold' }, { key: 'z' })
    first.loop.post('job', { n: 'poison' }, { key: 'k' })
    first.loop.post('job', { n: 'next' }, { key: 'k' })
    await settle(first.clock)
    await settle(first.clock)
    store = store.reopen()
    for (let lifeNo = 1; lifeNo <= 4; lifeNo++) {
      current = store
      const next = life(current, ran, { maxCrashes: 2, workers: 1 }, crash)
      next.loop.start()
      for (let t = 0; t < 4; t++) await settle(next.clock)
    }
    // Each attempt of `poison` was counted though it died before anything it did could commit (its start
    // was committed before it ran): two attempts, then the letter, then `next`.
    expect(ran).toEqual(['hold', 'poison', 'poison', 'next'])
  })

  it('does not letter a bystander: a message that ran beside the crashing one runs alone next time and finishes', async () => {
    let store = new MemoryStore()
    const ran: string[] = []
    let current = store
    const crash = () => {
      store = current.reopen()
    }
    const first = life(store, ran, { workers: 2 })
    first.loop.on('job', () => new Promise(() => {}), { replace: true })
    first.loop.start()
    first.loop.post('job', { n: 'poison' }, { key: 'a' })
    first.loop.post('job', { n: 'bystander' }, { key: 'b' })
    await settle(first.clock)
    await settle(first.clock) // both run, both rows say so: the crash interrupts both
    store = store.reopen()
    for (let lifeNo = 1; lifeNo <= 4; lifeNo++) {
      current = store
      const next = life(current, ran, { workers: 2, maxCrashes: 2 }, crash)
      next.loop.on(
        'job',
        async (m) => {
          ran.push(m.payload.n)
          if (m.payload.n === 'poison') crash()
          await next.clock.sleep(1) // the bystander is still running when the poison kills the process
          if (m.payload.n === 'poison') await next.clock.sleep(1e9)
        },
        { replace: true },
      )
      next.loop.start()
      for (let t = 0; t < 6; t++) await settle(next.clock, 1)
      if (lifeNo === 4) expect(next.loop.deadLetters.list().map((l) => l.payload)).toEqual([{ n: 'poison' }])
    }
    expect(ran.filter((n) => n === 'bystander')).toHaveLength(1)
    expect(ran.filter((n) => n === 'poison')).toHaveLength(1)
  })

  it('never counts an attempt that ended: failures and retries across restarts are not crashes', async () => {
    let store = new MemoryStore()
    const attempts: number[] = []
    for (let i = 0; i < 5; i++) {
      const clock = new VirtualClock()
      const loop = createLoop<Work>({
        clock,
        logger: false,
        store,
        maxCrashes: 1,
        retry: { maxAttempts: 100, unknownMaxAttempts: 100, baseMs: 1, capMs: 1, jitter: 0 },
      })
      loop.on('job', (_m, ctx) => {
        attempts.push(ctx.attempt)
        throw new Error('flaky')
      })
      loop.start()
      if (i === 0) loop.post('job', { n: 'a' })
      for (let t = 0; t < 3; t++) await settle(clock, 12)
      await loop.flushed()
      store = store.reopen() // dies between attempts (backing off): no attempt was running
      expect(loop.deadLetters.list().map((l) => l.error.code)).not.toContain('ERR_FLOWING_CRASH_LOOP')
    }
    expect(attempts.length).toBeGreaterThanOrEqual(5)
  })

  it('takes a type override over the loop option, and Infinity turns the guard off', async () => {
    for (const [loopMax, typeMax, lettered] of [
      [1, undefined, true],
      [Number.POSITIVE_INFINITY, 1, true],
      [1, Number.POSITIVE_INFINITY, false],
    ] as const) {
      let store = new MemoryStore()
      const ran: string[] = []
      const first = life(store, ran, { maxCrashes: loopMax })
      if (typeMax !== undefined)
        first.loop.on('job', async () => first.clock.sleep(1e9), { replace: true, maxCrashes: typeMax })
      first.loop.start()
      first.loop.post('job', { n: 'poison' })
      await settle(first.clock)
      await settle(first.clock)
      store = store.reopen()
      const next = life(store, ran, { maxCrashes: loopMax })
      next.loop.on('job', () => {}, { replace: true, ...(typeMax === undefined ? {} : { maxCrashes: typeMax }) })
      next.loop.start()
      await settle(next.clock)
      await settle(next.clock)
      expect(next.loop.deadLetters.list().length, `${loopMax}/${typeMax}`).toBe(lettered ? 1 : 0)
    }
  })

  it('is never retried, whatever the classifier says, and does not count against the circuit breaker', async () => {
    const store = await crashedOnce({ maxCrashes: 1 })
    const clock = new VirtualClock()
    const loop = createLoop<Work>({
      clock,
      logger: false,
      store,
      maxCrashes: 1,
      classify: () => 'retryable',
      retry: { maxAttempts: 5, unknownMaxAttempts: 5, baseMs: 1, jitter: 0 },
      circuitBreaker: { consecutiveFailures: 1 },
    })
    const circuits: string[] = []
    loop.events.on('circuit', (c) => circuits.push(String(c)))
    loop.on('job', () => {})
    loop.start()
    await settle(clock)
    await settle(clock)
    const [letter] = loop.deadLetters.list()
    expect(letter?.error.code).toBe('ERR_FLOWING_CRASH_LOOP')
    expect(letter?.attempts.length).toBe(1)
    expect(loop.metrics().counters.retried).toBe(0)
    expect(circuits).toEqual([]) // not a failure of its route
  })

  it('holds the others back for SOLO_MS at most: a hung handler does not stall the loop behind a suspect', async () => {
    const store = await crashedOnce()
    const clock = new VirtualClock()
    const loop = createLoop<Work>({ clock, logger: false, store, workers: 3 })
    const started: [string, number][] = []
    loop.on('job', async (m) => {
      started.push([m.payload.n, clock.now()])
      if (m.payload.n === 'hung') await new Promise(() => {})
    })
    loop.start()
    loop.post('job', { n: 'hung' }, { key: 'h', priority: 0 }) // in a handler before the suspect asks to run alone
    loop.post('job', { n: 'after' }, { key: 'x' })
    for (let t = 0; t < 10 && started.length < 3; t++) await settle(clock, 500)
    const at = new Map(started)
    expect([...at.keys()].sort()).toEqual(['after', 'hung', 'poison'])
    expect(at.get('hung')).toBe(0)
    expect(at.get('poison')).toBeGreaterThanOrEqual(SOLO_MS) // it waited for the hung one, then ran anyway
    expect(at.get('poison')).toBeLessThanOrEqual(SOLO_MS + 500)
    expect(at.get('after')).toBeLessThanOrEqual(2 * SOLO_MS + 500)
  })

  it('keeps the count through a stop and a restore of its snapshot', async () => {
    const store = await crashedOnce({ maxCrashes: 2 })
    const second = life(store, [], { maxCrashes: 2 })
    second.loop.on('job', () => new Promise(() => {}), { replace: true })
    second.loop.start()
    await settle(second.clock)
    const snapshot = await second.loop.stop({ deadlineMs: 0 })
    expect(snapshot.messages.map((m) => m.crashes)).toEqual([1])
    const clock = new VirtualClock()
    const third = createLoop<Work>({ clock, logger: false, maxCrashes: 1, store: new MemoryStore() })
    third.on('job', () => {})
    third.start()
    third.restore(snapshot)
    await settle(clock)
    await settle(clock)
    expect(third.deadLetters.list()[0]?.error.name).toBe('CrashLoopError')
  })

  it('refuses a bad maxCrashes, typed and naming it', () => {
    for (const bad of [0, -1, 1.5, '3', Number.NaN, null]) {
      expect(() => createLoop({ maxCrashes: bad as never })).toThrow(/options\.maxCrashes/)
      const loop = createLoop<Work>({ autoStart: false })
      expect(() => loop.on('job', () => {}, { maxCrashes: bad as never })).toThrow(/options\.maxCrashes/)
    }
    expect(() => createLoop({ maxCrash: 3 } as never)).toThrow(/maxCrashes/)
  })

  it('CrashLoopError is a typed error with its figures', () => {
    const e = new CrashLoopError('job', 4, 3)
    expect(e).toBeInstanceOf(Error)
    expect([e.code, e.messageType, e.crashes, e.maxCrashes]).toEqual(['ERR_FLOWING_CRASH_LOOP', 'job', 4, 3])
    expect(new NonRetryableError('x').code).not.toBe(e.code)
  })
})

// The model: per message, the crashes counted so far; a message runs at a life's start unless its count
// reached the limit; a life that crashes while it runs adds one. A message that succeeds is done.
describe('the crash-loop guard against a model (property)', () => {
  it('letters exactly the messages that crashed maxCrashes lives, runs the rest once each, in key order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.record({ key: fc.constantFrom('a', 'b'), poison: fc.integer({ min: 0, max: 5 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        async (maxCrashes, specs) => {
          // `poison` = the number of lives in which the message's attempt kills the process.
          let store = new MemoryStore()
          const crashesLeft = specs.map((s) => s.poison)
          const done: number[] = []
          const lettered = new Set<number>()
          for (let lifeNo = 0; lifeNo < 40; lifeNo++) {
            const clock = new VirtualClock()
            let died = false
            const loop = createLoop<{ job: { i: number } }>({ clock, logger: false, store, maxCrashes, workers: 2 })
            loop.on('job', async (m) => {
              const i = m.payload.i
              if ((crashesLeft[i] ?? 0) > 0) {
                crashesLeft[i] = (crashesLeft[i] ?? 0) - 1
                died = true
                return clock.sleep(1e9)
              }
              done.push(i)
            })
            loop.start()
            if (lifeNo === 0) for (const [i, s] of specs.entries()) loop.post('job', { i }, { key: s.key })
            for (let t = 0; t < 6; t++) await settle(clock)
            for (const l of loop.deadLetters.list()) lettered.add((l.payload as { i: number }).i)
            if (!died) break
            store = store.reopen()
          }
          specs.forEach((s, i) => {
            const letter = s.poison >= maxCrashes
            expect(lettered.has(i), `message ${i}`).toBe(letter)
            expect(done.filter((d) => d === i).length).toBe(letter ? 0 : 1)
          })
          for (const key of ['a', 'b']) {
            const order = done.filter((i) => specs[i]?.key === key)
            expect(order).toEqual([...order].sort((x, y) => x - y))
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})
