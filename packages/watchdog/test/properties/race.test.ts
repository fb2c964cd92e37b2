/**
 * I6 over random interleavings: complete / fail / cancel / heartbeat / time passing (timeouts) /
 * late settlement, against a reference model written from the spec.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Attempt, FencedError } from '../../src/index.js'
import { sharedWatchdog } from '../fixtures.js'

type Op =
  | { kind: 'guard'; timeoutMs: number; heartbeatMs: number | undefined }
  | { kind: 'done' | 'fail' | 'cancel' | 'heartbeat' | 'read-signal' | 'effect'; target: number }
  | { kind: 'advance'; ms: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('guard' as const),
    timeoutMs: fc.integer({ min: 1, max: 60 }),
    heartbeatMs: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constantFrom('done', 'fail', 'cancel', 'heartbeat', 'read-signal', 'effect' as const),
    target: fc.nat(),
  }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 25 }) }),
)

interface Model {
  readonly attempt: Attempt
  readonly deadline: number
  readonly heartbeatMs: number | undefined
  lastBeat: number
  outcome: 'running' | 'completed' | 'failed' | 'timed-out' | 'cancelled'
  timedOutAt: number
  late: boolean
  wins: number
}

describe('I6: one outcome per attempt (property)', () => {
  it('exactly one outcome wins; signals, fencing, late completions and zombies match the model', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.integer({ min: 0, max: 40 }), (ops, graceMs) => {
        const { watchdog, clock, driver } = sharedWatchdog({ graceMs })
        const models: Model[] = []
        let fenced = 0
        let late = 0
        const pick = (target: number): Model | undefined => models[target % Math.max(1, models.length)]
        for (const o of ops) {
          if (o.kind === 'guard') {
            const attempt = watchdog.guard({
              timeoutMs: o.timeoutMs,
              ...(o.heartbeatMs === undefined ? {} : { heartbeatMs: o.heartbeatMs }),
            })
            models.push({
              attempt,
              deadline: clock.time + o.timeoutMs,
              heartbeatMs: o.heartbeatMs,
              lastBeat: clock.time,
              outcome: 'running',
              timedOutAt: 0,
              late: false,
              wins: 0,
            })
            continue
          }
          if (o.kind === 'advance') {
            // Step 1 ms at a time so the model knows when each timeout happened.
            for (let i = 0; i < o.ms; i++) {
              clock.advance(1)
              for (const m of models) {
                if (m.outcome !== 'running') continue
                const beatDue = m.heartbeatMs !== undefined && clock.time >= m.lastBeat + m.heartbeatMs
                if (clock.time >= m.deadline || beatDue) {
                  m.outcome = 'timed-out'
                  m.timedOutAt = clock.time
                }
              }
            }
            continue
          }
          const m = pick(o.target)
          if (m === undefined) continue
          const a = m.attempt
          if (o.kind === 'heartbeat') {
            expect(a.heartbeat()).toBe(m.outcome === 'running')
            if (m.outcome === 'running') m.lastBeat = clock.time
          } else if (o.kind === 'read-signal') {
            expect(a.signal.aborted).toBe(m.outcome === 'timed-out' || m.outcome === 'cancelled')
          } else if (o.kind === 'effect') {
            if (m.outcome === 'running') a.fence('ctx.post')
            else {
              expect(() => a.fence('ctx.post')).toThrow(FencedError)
              fenced++
            }
          } else {
            const won = o.kind === 'done' ? a.done() : o.kind === 'fail' ? a.fail() : a.cancel()
            expect(won).toBe(m.outcome === 'running')
            if (won) {
              m.wins++
              m.outcome = o.kind === 'done' ? 'completed' : o.kind === 'fail' ? 'failed' : 'cancelled'
            } else if (o.kind !== 'cancel' && (m.outcome === 'timed-out' || m.outcome === 'cancelled') && !m.late) {
              m.late = true
              late++
            }
          }
        }
        const zombies = models.filter(
          (m) => m.outcome === 'timed-out' && !m.late && clock.time >= m.timedOutAt + graceMs,
        )
        for (const m of models) {
          expect(m.attempt.state).toBe(m.outcome)
          expect(m.wins).toBeLessThanOrEqual(1)
          expect(m.attempt.isZombie).toBe(zombies.includes(m))
        }
        const count = (s: Model['outcome']) => models.filter((m) => m.outcome === s).length
        const stats = watchdog.stats()
        expect(stats).toMatchObject({
          guarded: models.length,
          running: count('running'),
          completed: count('completed'),
          failed: count('failed'),
          timedOut: count('timed-out'),
          cancelled: count('cancelled'),
          lateCompletions: late,
          fencedEffects: fenced,
          zombies: zombies.length,
        })
        expect(
          watchdog
            .zombies()
            .map((z) => z.epoch)
            .sort((x, y) => x - y),
        ).toEqual(zombies.map((m) => m.attempt.epoch).sort((x, y) => x - y))
        // Pending timers: one per running attempt, one per timed-out attempt still in its grace period.
        const inGrace = models.filter(
          (m) => m.outcome === 'timed-out' && !m.late && clock.time < m.timedOutAt + graceMs,
        )
        expect(driver.size).toBe(count('running') + inGrace.length)
      }),
      { numRuns: 300 },
    )
  })

  it('fencing rejects 100 % of effects through stale epochs across retries of one message', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('timeout', 'cancel', 'done', 'fail'), { minLength: 1, maxLength: 30 }),
        (ends) => {
          const { watchdog, clock } = sharedWatchdog()
          const stale: Attempt[] = []
          let rejected = 0
          let attempted = 0
          for (const end of ends) {
            const current = watchdog.guard({ timeoutMs: 10, label: { type: 'order.paid', key: 'o-1' } })
            for (const old of stale) {
              attempted++
              try {
                old.fence('ctx.post')
              } catch (error) {
                if (error instanceof FencedError && error.epoch === old.epoch) rejected++
              }
            }
            current.fence('ctx.post') // the current epoch passes
            if (end === 'timeout') clock.advance(10)
            else if (end === 'cancel') current.cancel()
            else if (end === 'done') current.done()
            else current.fail()
            stale.push(current)
          }
          expect(rejected).toBe(attempted)
          expect(watchdog.stats().fencedEffects).toBe(attempted)
        },
      ),
    )
  })
})
