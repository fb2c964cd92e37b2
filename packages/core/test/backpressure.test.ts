import { WatermarkController } from '@flowing/backpressure'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LoopPressure } from '../src/admission/pressure.js'
import { BackpressureError, createLoop, InvalidArgumentError, type PressureLevel, VirtualClock } from '../src/index.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

function pressuredLoop(options: Parameters<typeof virtualLoop>[0] = {}) {
  const { clock, loop } = virtualLoop({ capacity: 100, workers: 1, autoStart: false, backpressure: true, ...options })
  const transitions: string[] = []
  loop.events.on('backpressure', (t) => transitions.push(`${t.from}→${t.to}`))
  loop.on('work', () => {})
  const fill = (n: number, priority: 0 | 5 = 0) => {
    for (let i = 0; i < n; i++) loop.post('work', i, { priority })
  }
  return { clock, loop, transitions, fill }
}

describe('Loop', () => {
  describe('backpressure', () => {
    it('emits one event per crossing, never one per post, and admits everything at warn', () => {
      const { loop, transitions, fill } = pressuredLoop()
      fill(59, 5)
      expect(transitions).toEqual([])
      fill(15, 5) // 74 %: warn, no shed yet
      expect(transitions).toEqual(['normal→warn'])
      expect(loop.metrics().gauges.pressure).toBe<PressureLevel>('warn')
      expect(loop.metrics().counters.rejected).toBe(0)
    })

    it('sheds posts less urgent than shedAbove at 80 %, with a typed error and a retry hint; urgent posts pass', () => {
      const { loop, transitions, fill } = pressuredLoop()
      fill(80)
      expect(transitions).toEqual(['normal→warn', 'warn→shed']) // one event per crossing
      const error = thrown(() => loop.post('work', 1, { priority: 5 }))
      expect(error).toBeInstanceOf(BackpressureError)
      expect(error.message).toMatch(
        /^Backpressure refused `work`: priority 5 is above shedAbove = 2 at level shed \(queue 80 % full\); retry in ~\d+ ms$/,
      )
      expect((error as BackpressureError).pressure).toMatchObject({ level: 'shed', cause: 'shed', fill: 0.8 })
      expect(loop.tryPost('work', 1, { priority: 7 })).toMatchObject({ ok: false, status: 'shed' })
      expect(loop.tryPost('work', 1, { priority: 2 })).toMatchObject({ ok: true, status: 'queued' })
      expect(loop.queued).toBe(81)
      expect(loop.desiredSize).toBe(70 - 81) // hysteresis: shed ends only below its exit mark (70 %)
    })

    it('rejects everything at 95 % and keeps the admission breaker open until below the exit mark and cooled down', async () => {
      const { clock, loop, transitions, fill } = pressuredLoop({
        backpressure: { admissionBreaker: { cooldownMs: 100, probes: 2 } },
      })
      fill(95)
      expect(transitions).toEqual(['normal→warn', 'warn→shed', 'shed→reject'])
      expect(loop.tryPost('work', 1, { priority: 0 })).toMatchObject({ ok: false, status: 'reject' })
      loop.start()
      await clock.advance(0) // all 95 drained at once (sync handlers)
      expect(loop.queued).toBe(0)
      expect(loop.metrics().gauges.pressure).toBe('normal')
      // Below every exit mark, but the breaker still cools down: critical posts wait too.
      const early = loop.tryPost('work', 1, { priority: 0 })
      expect(early).toMatchObject({ ok: false, status: 'reject' })
      if (!early.ok && early.status === 'reject')
        expect((early.error as BackpressureError).pressure.cause).toBe('breaker')
      await clock.advance(100)
      expect(loop.tryPost('work', 2, { priority: 0 }).ok).toBe(true) // probe 1
      expect(loop.tryPost('work', 3, { priority: 5 }).ok).toBe(true) // probe 2 closes it
      expect(loop.tryPost('work', 4, { priority: 9 }).ok).toBe(true)
      expect(loop.metrics().backpressure?.levels.reject.entries).toBe(1)
      await clock.run()
    })

    it('lets a shed producer wait in send() under `wait`, and admits it once the level falls', async () => {
      const { clock, loop, fill } = pressuredLoop({ overflow: 'wait', workers: 1 })
      fill(85)
      let admitted = false
      const sent = loop.send('work', 99, { priority: 6 }).then(() => {
        admitted = true
      })
      expect(loop.metrics().gauges.waitingProducers).toBe(1)
      loop.start()
      await clock.run()
      await sent
      expect(admitted).toBe(true)
      expect(loop.metrics().counters).toMatchObject({ accepted: 86, rejected: 0, succeeded: 86 })
    })

    it('resolves ready only once the level falls below the shed exit mark', async () => {
      const { clock, loop } = virtualLoop({ capacity: 100, workers: 1, autoStart: false, backpressure: true })
      loop.on('work', async () => {
        await clock.sleep(1)
      })
      for (let i = 0; i < 85; i++) loop.post('work', i, { priority: 0 })
      let readyAt = -1
      void loop.ready.then(() => {
        readyAt = loop.queued
      })
      loop.start()
      await clock.run()
      expect(readyAt).toBe(69) // the first queue length below 70 %
    })

    it('wakes a producer held by the open breaker when the cooldown ends, with no queue activity', async () => {
      const { clock, loop, fill } = pressuredLoop({
        overflow: 'wait',
        backpressure: { admissionBreaker: { cooldownMs: 50 } },
      })
      fill(95)
      loop.start()
      await clock.advance(0) // drained: the queue is empty, the breaker open
      let admittedAt = -1
      const sent = loop.send('work', 1, { priority: 0 }).then(() => {
        admittedAt = clock.now()
      })
      await clock.run()
      await sent
      expect(admittedAt).toBe(50)
    })

    it('lets due delayed messages in regardless of the level (they were accepted: I1)', async () => {
      const { clock, loop, fill } = pressuredLoop()
      loop.postDelayed('work', 7, 10, { priority: 9 })
      fill(95)
      expect(loop.metrics().gauges.pressure).toBe('reject')
      await clock.advance(10)
      expect(loop.queued).toBe(96)
      expect(loop.metrics().counters).toMatchObject({ accepted: 96, dropped: 0, rejected: 0 })
    })

    it('refuses bad backpressure options with typed errors', () => {
      expect(thrown(() => createLoop({ backpressure: 'on' as never }))).toBeInstanceOf(InvalidArgumentError)
      expect(thrown(() => createLoop({ backpressure: { shedAbove: 12 as never } })).message).toContain(
        'Expected `options.backpressure.shedAbove` to be an integer from 0 (most urgent) to 9',
      )
      const marks = thrown(() => createLoop({ backpressure: { shed: { enter: 0.5, exit: 0.6 } } }))
      expect(marks).toBeInstanceOf(InvalidArgumentError)
      expect(marks.message).toBe(
        'Expected `options.backpressure.shed.exit` to be below `options.backpressure.shed.enter` (0.5), got `0.6` (number)',
      )
    })

    it('never exceeds capacity and emits exactly one event per level change, across random interleavings', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.oneof(
              fc.record({
                kind: fc.constant('post' as const),
                priority: fc.integer({ min: 0, max: 9 }),
                n: fc.integer({ min: 1, max: 30 }),
              }),
              fc.record({
                kind: fc.constant('send' as const),
                priority: fc.integer({ min: 0, max: 9 }),
                timeoutMs: fc.integer({ min: 0, max: 20 }),
              }),
              fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }),
            ),
            { maxLength: 30 },
          ),
          async (steps) => {
            const clock = new VirtualClock()
            const loop = createLoop<Messages>({
              clock,
              capacity: 40,
              workers: 2,
              overflow: 'wait',
              backpressure: { admissionBreaker: { cooldownMs: 5, probes: 3 } },
            })
            let levelChanges = 0
            let events = 0
            let last: PressureLevel = 'normal'
            const watch = () => {
              const level = loop.metrics().gauges.pressure
              if (level !== last) levelChanges++
              last = level
              expect(loop.queued).toBeLessThanOrEqual(40)
            }
            loop.events.on('backpressure', (t) => {
              events++
              expect(t.from).not.toBe(t.to)
            })
            loop.events.on('posted', watch)
            loop.events.on('started', watch)
            loop.on('work', async () => {
              await clock.sleep(1)
            })
            const pending: Promise<unknown>[] = []
            for (const step of steps) {
              if (step.kind === 'post') {
                for (let i = 0; i < step.n; i++) loop.tryPost('work', i, { priority: step.priority as 0 })
              } else if (step.kind === 'send') {
                pending.push(
                  loop
                    .send('work', 0, { priority: step.priority as 0, waitTimeoutMs: step.timeoutMs })
                    .catch((e: unknown) => e),
                )
              } else await clock.advance(step.ms)
              watch()
            }
            const stopped = loop.stop()
            await clock.run()
            await Promise.all(pending)
            await stopped
            watch()
            expect(events).toBe(levelChanges)
            const c = loop.metrics().counters
            expect(c.posted).toBe(c.accepted + c.rejected)
            expect(c.accepted).toBe(c.succeeded)
          },
        ),
        { numRuns: 150, timeout: 2000 }, // a hang is a counterexample, not a test timeout
      )
    })

    it('does not spin a 0 ms wake-up timer while the cooldown is over but the fill still holds the breaker', async () => {
      // Found by the property above (1 run in ~2000): the wake-up re-armed itself at 0 ms forever.
      const clock = new VirtualClock()
      const loop = createLoop<Messages>({
        clock,
        capacity: 40,
        workers: 2,
        overflow: 'wait',
        backpressure: { admissionBreaker: { cooldownMs: 5, probes: 3 } },
      })
      loop.on('work', () => clock.sleep(1))
      const tryPosts = (n: number) => {
        for (let i = 0; i < n; i++) loop.tryPost('work', i, { priority: 0 })
      }
      const sends: Promise<string>[] = []
      const send = (priority: 0 | 3, timeoutMs: number) =>
        sends.push(
          loop.send('work', 0, { priority, waitTimeoutMs: timeoutMs }).then(
            () => 'sent',
            (e: Error) => e.name,
          ),
        )
      tryPosts(1)
      send(0, 0)
      await clock.advance(0)
      tryPosts(1)
      send(0, 0)
      tryPosts(36) // 95 %: reject, the breaker opens
      send(3, 6) // waits for the breaker
      await clock.advance(5) // cooldown over, fill still above the reject exit: this never returned
      expect(clock.now()).toBe(5)
      await clock.run()
      // The urgent sends went in; the p3 one (shed until the fill drops below 70 %) gave up at 6 ms.
      expect(await Promise.all(sends)).toEqual(['sent', 'sent', 'SendTimeoutError'])
      await loop.stop()
    })
  })
})

describe('LoopPressure skipping lengths that move nothing', () => {
  const op = fc.record({
    kind: fc.constantFrom('update', 'update', 'decide', 'stats'),
    queued: fc.integer({ min: 0, max: 110 }),
    priority: fc.integer({ min: 0, max: 9 }),
    advanceMs: fc.integer({ min: 0, max: 30 }),
  })

  it('decides, moves and reports exactly as a controller fed every length', () => {
    // As in the loop: the queue length changes only through `update`; decisions and stats see it as it is.
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.boolean(), (ops, breaker) => {
        let time = 0
        let length = 0
        const clock = { now: () => time } as unknown as VirtualClock
        const options = breaker ? { admissionBreaker: { cooldownMs: 20 }, minDwellMs: 5 } : { minDwellMs: 5 }
        const fast = new LoopPressure(options, 100, clock, () => {})
        const reference = new WatermarkController({ ...options, now: () => time })
        for (const { kind, queued, priority, advanceMs } of ops) {
          time += advanceMs
          if (kind === 'update') {
            length = queued
            fast.update(length)
            reference.update(length / 100)
          } else if (kind === 'decide') {
            expect(fast.decide(length, priority)).toBe(reference.decide(length / 100, priority, 2))
          } else {
            const { retryAfterMs: _a, ...got } = fast.stats(length)
            const { retryAfterMs: _b, ...want } = reference.stats()
            expect(got).toEqual(want)
          }
          expect(fast.level).toBe(reference.level)
        }
      }),
    )
  })
})
