import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ArgumentError, argumentChecks, FlowingError, integerRule, numberRule } from '../src/index.js'
import { anyValue, hostileValues } from './hostile-values.js'

class KitError extends ArgumentError {
  static override readonly code = 'ERR_KIT_INVALID_ARGUMENT'
}
const check = argumentChecks(KitError)

/** Runs `act` and returns the KitError it throws (failing on anything else, or on no throw). */
function refusal(act: () => unknown): KitError {
  try {
    act()
  } catch (error) {
    expect(error).toBeInstanceOf(KitError)
    return error as KitError
  }
  throw new Error('expected a KitError, nothing was thrown')
}

// Optimal-string-alignment distance, case ignored: the reference the hint is held to.
function distance(a: string, b: string): number {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  const d = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => i + j))
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const row = d[i] as number[]
      const up = d[i - 1] as number[]
      row[j] = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1),
      )
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1)
      }
    }
  }
  return (d[x.length] as number[])[y.length] as number
}

describe('argumentChecks()', () => {
  describe('integer()', () => {
    it('returns a safe integer within the range and refuses anything else with the derived rule', () => {
      expect(check.integer('n', 5, { min: 1, max: 64 })).toBe(5)
      const error = refusal(() => check.integer('options.size', 65, { min: 1, max: 64 }))
      expect(error.message).toBe('Expected `options.size` to be an integer from 1 to 64, got `65` (number)')
      expect([error.code, error.argument, error.rule, error.value]).toEqual([
        'ERR_KIT_INVALID_ARGUMENT',
        'options.size',
        'an integer from 1 to 64',
        65,
      ])
      for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '3', 3n, null]) {
        expect(refusal(() => check.integer('n', bad)).rule).toBe('an integer')
      }
      expect(refusal(() => check.integer('n', 0, { min: 1, rule: 'a positive integer' })).rule).toBe(
        'a positive integer',
      )
    })
  })

  describe('number()', () => {
    it('refuses NaN always and Infinity unless finite is false', () => {
      expect(check.number('x', 0.5, { above: 0, max: 1 })).toBe(0.5)
      expect(check.number('x', Number.POSITIVE_INFINITY, { above: 0, finite: false })).toBe(Number.POSITIVE_INFINITY)
      expect(refusal(() => check.number('x', Number.POSITIVE_INFINITY, { above: 0 })).message).toBe(
        'Expected `x` to be a finite number > 0, got `Infinity` (number)',
      )
      expect(refusal(() => check.number('x', Number.NaN, { finite: false })).rule).toBe('a number (not NaN)')
      expect(refusal(() => check.number('x', 1, { min: 0, below: 1 })).rule).toBe('a number in [0, 1)')
      expect(refusal(() => check.number('x', '1', { min: 0 })).value).toBe('1')
    })
  })

  describe('the rules', () => {
    it('word each range one way', () => {
      expect([
        integerRule(),
        integerRule({ min: 1 }),
        integerRule({ max: 9 }),
        integerRule({ min: 0, max: 9 }),
        numberRule(),
        numberRule({ finite: false }),
        numberRule({ min: 0 }),
        numberRule({ above: 0, finite: false }),
        numberRule({ below: 1 }),
        numberRule({ min: 0.001, max: 3_600_000 }),
        numberRule({ above: 0, max: 1 }),
        numberRule({ above: 0, below: 1 }),
      ]).toEqual([
        'an integer',
        'an integer ≥ 1',
        'an integer ≤ 9',
        'an integer from 0 to 9',
        'a finite number',
        'a number (not NaN)',
        'a finite number ≥ 0',
        'a number > 0',
        'a finite number < 1',
        'a number from 0.001 to 3600000',
        'a number in (0, 1]',
        'a number in (0, 1)',
      ])
    })
  })

  describe('plainObject() and optionsObject()', () => {
    it('take an object, refuse null, arrays, functions and primitives; optionsObject takes undefined', () => {
      const o = { a: 1 }
      expect(check.plainObject('options', o)).toBe(o)
      expect(check.optionsObject('options', undefined)).toBeUndefined()
      for (const bad of [null, [], () => 1, 'x', 1]) {
        expect(refusal(() => check.plainObject('options', bad)).rule).toBe('an object')
        expect(refusal(() => check.optionsObject('options', bad)).rule).toBe('an options object')
      }
      expect(refusal(() => check.plainObject('options', undefined, 'an object with a `path`')).message).toBe(
        'Expected `options` to be an object with a `path`, got `undefined` (undefined)',
      )
    })
  })

  describe('knownKeys()', () => {
    it('refuses the first unknown key, quoting its value, listing the known ones and suggesting a near miss', () => {
      const error = refusal(() => check.knownKeys('options', { size: 1, sise: 4 }, ['size', 'idleMs']))
      expect(error.message).toBe(
        'Expected `options.sise` to be one of the known options (size, idleMs), got `4` (number); did you mean `size`?',
      )
      expect([error.argument, error.value, error.hint]).toEqual(['options.sise', 4, 'did you mean `size`?'])
      expect(refusal(() => check.knownKeys('o', { sparkle: true }, ['size'])).hint).toBeUndefined()
      expect(() => check.knownKeys('o', { size: 1 }, ['size'])).not.toThrow()
    })

    it('speaks in the wording the package gives', () => {
      const legacy = argumentChecks(KitError, (known) => ({ rule: `a known option (${known.join(', ')})` }))
      expect(refusal(() => legacy.knownKeys('options', { grace: 1 }, ['graceMs'])).message).toBe(
        'Expected `options.grace` to be a known option (graceMs), got `1` (number)',
      )
    })

    it('turns a throwing getter or ownKeys trap into an argument error naming it', () => {
      const getter = Object.defineProperty({}, 'bad', {
        enumerable: true,
        get() {
          throw new Error('boom')
        },
      })
      const unreadable = refusal(() => check.knownKeys('options', getter, ['good']))
      expect([unreadable.argument, unreadable.rule, (unreadable.cause as Error).message]).toEqual([
        'options.bad',
        'a readable option (reading it threw)',
        'boom',
      ])
      const [proxy] = hostileValues() as [object]
      expect(refusal(() => check.knownKeys('options', proxy, ['good'])).argument).toBe('options')
    })

    it('suggests the known name nearest to a misspelt one, the first on ties, and only within two edits', () => {
      const name = fc.stringMatching(/^[a-zA-Z]{1,10}$/)
      fc.assert(
        fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), name, (known, key) => {
          fc.pre(!known.includes(key))
          const { hint } = refusal(() => check.knownKeys('o', { [key]: 1 }, known))
          const best = Math.min(...known.map((k) => distance(key, k)))
          if (best > 2) expect(hint).toBeUndefined()
          else expect(hint).toBe(`did you mean \`${known.find((k) => distance(key, k) === best)}\`?`)
        }),
      )
    })

    it('finds the name a typo came from: one edit away from a known name, it is suggested', () => {
      const known = ['capacity', 'workers', 'overflow', 'handlerTimeoutMs', 'maxDelayed', 'agingMs']
      for (const [typo, meant] of [
        ['capasity', 'capacity'],
        ['wokers', 'workers'],
        ['overflwo', 'overflow'],
        ['handlerTimeoutMS', 'handlerTimeoutMs'],
        ['maxDelayedd', 'maxDelayed'],
        ['agingms', 'agingMs'],
      ] as const) {
        expect(refusal(() => check.knownKeys('options', { [typo]: 1 }, known)).hint).toBe(`did you mean \`${meant}\`?`)
      }
    })
  })

  describe('fn(), boolean() and oneOf()', () => {
    it('check the type, and oneOf suggests a near miss when asked', () => {
      const f = () => 1
      expect([check.fn('f', f), check.boolean('b', false), check.oneOf('m', 'full', ['normal', 'full'])]).toEqual([
        f,
        false,
        'full',
      ])
      expect(refusal(() => check.fn('f', 'f')).rule).toBe('a function')
      expect(refusal(() => check.boolean('b', 0)).rule).toBe('a boolean')
      expect(refusal(() => check.oneOf('m', 'ful', ['normal', 'full'])).message).toBe(
        "Expected `m` to be one of 'normal', 'full', got `\"ful\"` (string)",
      )
      const suggested = refusal(() =>
        check.oneOf('s', 'SIGTREM', ['SIGTERM', 'SIGINT'], { rule: 'a signal', suggest: true }),
      )
      expect(suggested.message).toBe('Expected `s` to be a signal, got `"SIGTREM"` (string); did you mean `SIGTERM`?')
    })
  })

  describe('snapshot()', () => {
    it('copies the own enumerable options, reading each getter once', () => {
      let reads = 0
      const given = Object.defineProperty({ a: 1 }, 'b', {
        enumerable: true,
        get: () => {
          reads++
          return 2
        },
      })
      const copy = check.snapshot('options', given)
      expect([copy, reads]).toEqual([{ a: 1, b: 2 }, 1])
      expect(refusal(() => check.snapshot('options', 5)).rule).toBe('an object')
    })
  })

  describe('readably() and typed()', () => {
    it('let Flowing errors through and turn anything else into an argument error naming the throwing path', () => {
      const flowing = new FlowingError('ERR_X', 'x')
      expect(check.typed('options', flowing)).toBe(flowing)
      const value = {
        retry: Object.defineProperty({}, 'maxAttempts', {
          enumerable: true,
          get() {
            throw new Error('getter')
          },
        }),
      }
      const error = refusal(() =>
        check.readably('options', () => (value.retry as Record<string, unknown>)['maxAttempts'], value),
      )
      expect([error.argument, error.rule]).toEqual([
        'options.retry.maxAttempts',
        'a readable option (reading it threw)',
      ])
      expect(check.readably('options', () => 42)).toBe(42)
    })
  })

  it('every check, given any value, returns or throws the bound class in the one shape — never anything else', () => {
    const checks: ((value: unknown) => unknown)[] = [
      (v) => check.integer('a', v, { min: 0, max: 9 }),
      (v) => check.number('a', v, { above: 0 }),
      (v) => check.plainObject('a', v),
      (v) => check.optionsObject('a', v),
      (v) => check.knownKeys('a', check.plainObject('a', v), ['known']),
      (v) => check.fn('a', v),
      (v) => check.boolean('a', v),
      (v) => check.oneOf('a', v, ['x', 'y'], { suggest: true }),
      (v) => check.snapshot('a', v),
      (v) => check.readably('a', () => Object.values(v as object), v),
    ]
    fc.assert(
      fc.property(anyValue, fc.nat({ max: checks.length - 1 }), (make, i) => {
        try {
          ;(checks[i] as (value: unknown) => unknown)(make())
        } catch (error) {
          expect(error).toBeInstanceOf(KitError)
          // An unknown key is any string, backticks and newlines included.
          expect((error as KitError).message).toMatch(
            /^Expected `a(\.[\s\S]*)?` to be .+, got `[\s\S]*` \(\w+\)(; .*)?$/,
          )
        }
      }),
      { numRuns: 500 },
    )
  })
})
