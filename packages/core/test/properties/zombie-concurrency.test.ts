/**
 * Honest concurrency: the handlers really executing (started, not settled) never exceed `workers`,
 * plus the timed-out ones over `maxZombies` — and that excess always was announced by a `zombies`
 * event first. Timed-out handlers keep running (JavaScript cannot stop them), so the pool must keep
 * counting them; checked with generated latencies, deadlines, grace periods (0 included) and
 * handlers that never settle.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, HandlerTimeoutError, type Message, VirtualClock } from '../../src/index.js'

interface ZombieMessages {
  job: { readonly latency: number | 'never' }
}

const setupArb = fc.record({
  workers: fc.integer({ min: 1, max: 3 }),
  maxZombies: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  timeoutMs: fc.integer({ min: 1, max: 30 }),
  graceMs: fc.constantFrom(0, 1, 10, 50, 5_000, Number.POSITIVE_INFINITY),
})
const jobsArb = fc.array(
  fc.record({
    latency: fc.oneof(fc.integer({ min: 0, max: 80 }), fc.constant('never' as const)),
    postedAt: fc.integer({ min: 0, max: 60 }),
  }),
  { maxLength: 20 },
)

describe('WorkerPool', () => {
  describe('zombie reservation (property)', () => {
    it('never runs more handlers than workers + announced zombies over maxZombies', async () => {
      await fc.assert(
        fc.asyncProperty(setupArb, jobsArb, async (setup, jobs) => {
          const clock = new VirtualClock()
          const { workers, timeoutMs, graceMs } = setup
          const maxZombies = setup.maxZombies ?? workers
          const loop = createLoop<ZombieMessages>({
            clock,
            workers,
            timeoutMs,
            graceMs,
            ...(setup.maxZombies === undefined ? {} : { maxZombies: setup.maxZombies }),
            retry: { maxAttempts: 1 },
            logger: false,
          })
          const violations: string[] = []
          const executing = new Set<string>()
          const timedOut = new Set<string>()
          let announced = false
          // Timed-out handlers still executing: what the pool must count.
          const zombies = () => [...timedOut].filter((id) => executing.has(id)).length
          const check = (when: string) => {
            const over = Math.max(0, zombies() - maxZombies)
            if (executing.size > workers + over) violations.push(`${when}: ${executing.size} executing, ${over} over`)
            if (over > 0 && !announced) violations.push(`${when}: ${over} zombies over maxZombies, no event`)
          }
          loop.events.on('zombies', (count) => {
            if (count <= maxZombies) violations.push(`zombies event with ${count} ≤ ${maxZombies}`)
            announced = true
          })
          loop.events.on('failed', (m, error) => {
            if (error instanceof HandlerTimeoutError) timedOut.add(m.id)
            check(`timeout of ${m.id}`)
          })
          loop.on('job', async (m: Message<ZombieMessages, 'job'>) => {
            executing.add(m.id)
            check(`start of ${m.id}`)
            const { latency } = m.payload
            await (latency === 'never' ? new Promise(() => {}) : clock.sleep(latency))
            executing.delete(m.id)
            if (zombies() <= maxZombies) announced = false // the next crossing must be announced again
          })
          for (const job of jobs) loop.postAt('job', { latency: job.latency }, job.postedAt)
          await clock.run()
          expect(violations).toEqual([])
          const c = loop.metrics().counters
          // Zombies that never settle may keep their slots (up to maxZombies): what waits behind them stays queued.
          expect(c.succeeded + c.failed + loop.queued).toBe(jobs.length)
        }),
        { numRuns: 150 },
      )
    }, 30_000)
  })
})
