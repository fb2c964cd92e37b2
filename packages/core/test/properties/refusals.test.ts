/**
 * BRIEF I1 and I7 for bad options: any mix of good, `undefined`, bad and unreadable options given to
 * `post`, `tryPost`, `send`, `postDelayed` and `request` is either admitted or refused — once, at
 * once, with a typed error — so `posted = accepted + rejected` after every call, and at rest every
 * accepted message has one outcome.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLoop, isFlowingError, VirtualClock } from '../../src/index.js'
import { ended } from '../fixtures.js'
import { PROPERTY_TIMEOUT_MS } from './harness.js'

type Via = 'post' | 'tryPost' | 'send' | 'postDelayed' | 'request'

const unreadable = Symbol('a getter that throws')

// Per option: absent (no key), `undefined`, good values, bad values, a getter that throws.
const valuesOf = (good: unknown[], bad: unknown[]) =>
  fc.option(fc.constantFrom(undefined, unreadable, ...good, ...bad), { nil: 'absent' as const, freq: 2 })
const optionArbs = {
  key: valuesOf(['k', 7], [Number.NaN, {}]),
  priority: valuesOf([0, 5, 9], [-1, 10, 1.5, '1']),
  overflow: valuesOf(['reject', 'drop-new'], ['drop-all']),
  handlerTimeoutMs: valuesOf([50, Number.POSITIVE_INFINITY], [0, -5]),
  idempotencyKey: valuesOf(['idem-1'], ['']),
  group: valuesOf(['g'], ['', 42]),
  waitTimeoutMs: valuesOf([5, 1_000], [-1, 0, Number.NaN, '50', Number.POSITIVE_INFINITY]),
  deadLetter: valuesOf([true, false], ['yes', 1]),
  retyr: fc.constantFrom('absent' as const, 'absent' as const, 'absent' as const, { maxAttempts: 1 }),
}
const callArb = fc.record({
  via: fc.constantFrom<Via>('post', 'tryPost', 'send', 'postDelayed', 'request'),
  options: fc.option(fc.record(optionArbs), { nil: undefined, freq: 8 }),
  fails: fc.boolean(),
})
type Call = typeof callArb extends fc.Arbitrary<infer T> ? T : never

// The options object a call passes: absent keys left out, `unreadable` as a throwing getter.
function optionsOf(spec: Call['options']): Record<string, unknown> | undefined {
  if (spec === undefined) return undefined
  const options: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(spec)) {
    if (value === 'absent') continue
    if (value === unreadable) {
      Object.defineProperty(options, name, {
        enumerable: true,
        get: () => {
          throw new Error(`reading ${name}`)
        },
      })
    } else options[name] = value
  }
  return options
}

describe('Loop', () => {
  describe('bad options (properties)', () => {
    it('admits or refuses each call once, typed: posted = accepted + rejected after every call', {
      timeout: PROPERTY_TIMEOUT_MS * 3,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 25 }), async (calls) => {
          const clock = new VirtualClock()
          const loop = createLoop<{ work: boolean }>({ clock, logger: false, retry: { maxAttempts: 1 } })
          loop.on('work', (m) => {
            if (m.payload) throw new Error('handler failed')
          })
          const settled: Promise<unknown>[] = []
          for (const call of calls) {
            const before = loop.metrics().counters
            const options = optionsOf(call.options) as never
            let refusal: unknown
            try {
              const result =
                call.via === 'post'
                  ? loop.post('work', call.fails, options)
                  : call.via === 'tryPost'
                    ? loop.tryPost('work', call.fails, options)
                    : call.via === 'postDelayed'
                      ? loop.postDelayed('work', call.fails, 3, options)
                      : call.via === 'send'
                        ? loop.send('work', call.fails, options)
                        : loop.request('work', call.fails, options)
              if (result instanceof Promise) settled.push(result.catch(() => {}))
            } catch (error) {
              refusal = error
            }
            const after = loop.metrics().counters
            expect(after.posted).toBe(before.posted + 1)
            expect(after.posted).toBe(after.accepted + after.rejected) // I1, at once
            // Refused synchronously ⇒ counted in `rejected`, typed, nothing admitted.
            if (refusal !== undefined) {
              expect(isFlowingError(refusal)).toBe(true)
              expect(after.accepted).toBe(before.accepted)
            }
          }
          await clock.run()
          await Promise.all(settled)
          await clock.run()
          const c = loop.metrics().counters
          expect(c.posted).toBe(calls.length)
          expect(c.posted).toBe(c.accepted + c.rejected)
          expect(ended(c)).toBe(c.accepted) // at rest, every accepted message has its one outcome
          expect(loop.sideTableSize).toBe(0)
        }),
        { numRuns: 300 },
      )
    })
  })
})
