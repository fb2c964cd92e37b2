/**
 * One message's trace (steps packed as numbers, a succeeded attempt kept as fields) against the
 * plainest model: an array of transition objects and an array of attempt records. Random sequences of
 * notes (every state, with and without attempt numbers and details, past the 64-step bound), failed
 * and restored attempts and one success: the same transitions, truncation count, attempts, attempt
 * count, last attempt, last step time and first `queued` time after every operation.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AttemptRecord } from '../../src/contracts/failures.js'
import { MAX_TRANSITIONS, type MessageState, type Transition } from '../../src/contracts/traces.js'
import { STATES, Trace } from '../../src/failure/trace-record.js'
import type { Envelope } from '../../src/internal/envelope.js'
import { PROPERTY_TIMEOUT_MS } from './harness.js'

type Op =
  | { op: 'note'; state: MessageState; at: number; attempt: number | undefined; detail: string | undefined }
  | { op: 'attempt'; startedAt: number; durationMs: number; outcome: 'failed' | 'timed-out' }
  | { op: 'succeeded'; startedAt: number; durationMs: number }

const timeArb = fc.double({ min: 0, max: 1e9, noNaN: true })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('note' as const),
      state: fc.constantFrom(...STATES),
      at: timeArb,
      attempt: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
      detail: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('attempt' as const),
      startedAt: timeArb,
      durationMs: timeArb,
      outcome: fc.constantFrom('failed' as const, 'timed-out' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('succeeded' as const), startedAt: timeArb, durationMs: timeArb }),
  },
)

class Model {
  readonly transitions: Transition[] = []
  readonly attempts: AttemptRecord[] = []
  truncated = 0

  note(state: MessageState, at: number, attempt: number | undefined, detail: string | undefined): void {
    if (this.transitions.length >= MAX_TRANSITIONS) {
      this.truncated++
      return
    }
    const t: { state: MessageState; at: number; attempt?: number; detail?: string } = { state, at }
    if (attempt !== undefined) t.attempt = attempt
    if (detail !== undefined) t.detail = detail
    this.transitions.push(t)
  }
}

const envelope = { seq: 1, key: 'k', traceId: 't:1' } as unknown as Envelope

describe('a packed trace', () => {
  it(
    'reads back as the model of transition objects and attempt records',
    () => {
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 150 }), (ops) => {
          const trace = new Trace(envelope)
          const model = new Model()
          let succeeded = false
          for (const o of ops) {
            if (o.op === 'note') {
              trace.note(o.state, o.at, o.attempt, o.detail)
              model.note(o.state, o.at, o.attempt, o.detail)
            } else if (succeeded)
              continue // a succeeded attempt is the last one
            else {
              const attempt = model.attempts.length + 1
              const base = {
                attempt,
                startedAt: o.startedAt,
                startedAtEpochMs: o.startedAt + 5,
                durationMs: o.durationMs,
              }
              if (o.op === 'attempt') {
                const record: AttemptRecord = { ...base, outcome: o.outcome }
                trace.addAttempt(record)
                model.attempts.push(record)
              } else {
                trace.succeeded(attempt, o.startedAt, o.startedAt + 5, o.durationMs)
                model.attempts.push({ ...base, outcome: 'succeeded' })
                succeeded = true
              }
            }
            expect(trace.transitions).toEqual(model.transitions)
            expect(trace.truncated).toBe(model.truncated)
            expect(trace.attempts).toEqual(model.attempts)
            expect(trace.attemptCount).toBe(model.attempts.length)
            expect(trace.lastAttempt).toEqual(model.attempts.at(-1))
            expect(trace.lastAt).toBe(model.transitions.at(-1)?.at)
            expect(trace.firstQueuedAt).toBe(model.transitions.find((t) => t.state === 'queued')?.at)
          }
        }),
        { numRuns: 300 },
      )
    },
    PROPERTY_TIMEOUT_MS,
  )

  it('keeps the state of the last note, also past the bound', () => {
    const trace = new Trace(envelope)
    for (let i = 0; i < MAX_TRANSITIONS + 3; i++) trace.note(i % 2 === 0 ? 'queued' : 'held', i)
    trace.note('succeeded', 99)
    expect(trace.state).toBe('succeeded')
    expect(trace.transitions).toHaveLength(MAX_TRANSITIONS)
    expect(trace.truncated).toBe(4)
  })
})
