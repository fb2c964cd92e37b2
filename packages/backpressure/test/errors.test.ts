import { describe, expect, it } from 'vitest'
import {
  BackpressureArgumentError,
  BackpressurePolicyError,
  describeValue,
  WatermarkController,
  type WatermarkControllerOptions,
} from '../src/index.js'

/** Runs `act` and returns the BackpressureArgumentError it throws (failing on anything else). */
function argumentError(act: () => unknown): BackpressureArgumentError {
  try {
    act()
  } catch (error) {
    expect(error).toBeInstanceOf(BackpressureArgumentError)
    return error as BackpressureArgumentError
  }
  throw new Error('expected a BackpressureArgumentError, nothing was thrown')
}

const configure = (options: unknown) => () => new WatermarkController(options as WatermarkControllerOptions)

describe('errors', () => {
  it('carry a stable code, their class name, and the argument, rule and value', () => {
    const e = new BackpressureArgumentError('warn.exit', 'below `warn.enter` (0.6)', 0.7)
    expect(e).toBeInstanceOf(BackpressurePolicyError)
    expect(e).toBeInstanceOf(Error)
    expect([e.name, e.code, e.argument, e.value]).toEqual([
      'BackpressureArgumentError',
      'ERR_BACKPRESSURE_INVALID_ARGUMENT',
      'warn.exit',
      0.7,
    ])
    expect(e.message).toBe('Expected `warn.exit` to be below `warn.enter` (0.6), got `0.7` (number)')
  })

  it('quote values with their kind', () => {
    expect(describeValue('5')).toBe('`"5"` (string)')
    expect(describeValue(null)).toBe('`null` (null)')
    expect(describeValue([])).toBe('`[array]` (array)')
    expect(describeValue({})).toBe('`[object]` (object)')
    expect(describeValue(() => 1)).toBe('`[function anonymous]` (function)')
    expect(describeValue(1n)).toBe('`1n` (bigint)')
    expect(describeValue(Symbol('s'))).toBe('`Symbol(s)` (symbol)')
  })
})

describe('WatermarkController bad configuration', () => {
  const cases: [string, unknown, string][] = [
    [
      'an exit not below its entry',
      { warn: { exit: 0.7 } },
      'Expected `warn.exit` to be below `warn.enter` (0.6), got `0.7` (number)',
    ],
    [
      'an exit equal to its entry',
      { shed: { enter: 0.75, exit: 0.75 } },
      'Expected `shed.exit` to be below `shed.enter` (0.75), got `0.75` (number)',
    ],
    [
      'entries not increasing',
      { shed: { enter: 0.55, exit: 0.52 } },
      'Expected `shed.enter` to be above `warn.enter` (0.6), got `0.55` (number)',
    ],
    [
      'equal entries',
      { reject: { enter: 0.8 } },
      'Expected `reject.exit` to be below `reject.enter` (0.8), got `0.85` (number)',
    ],
    [
      'equal entries, exits fine',
      { reject: { enter: 0.8, exit: 0.75 } },
      'Expected `reject.enter` to be above `shed.enter` (0.8), got `0.8` (number)',
    ],
    [
      'exits not increasing',
      { shed: { exit: 0.4 } },
      'Expected `shed.exit` to be above `warn.exit` (0.5), got `0.4` (number)',
    ],
    ['an entry of 0', { warn: { enter: 0 } }, 'Expected `warn.enter` to be a number in (0, 1], got `0` (number)'],
    [
      'an entry above 1',
      { reject: { enter: 1.01 } },
      'Expected `reject.enter` to be a number in (0, 1], got `1.01` (number)',
    ],
    [
      'a NaN entry',
      { warn: { enter: Number.NaN } },
      'Expected `warn.enter` to be a number in (0, 1], got `NaN` (number)',
    ],
    ['a negative exit', { warn: { exit: -0.1 } }, 'Expected `warn.exit` to be a number in [0, 1), got `-0.1` (number)'],
    [
      'a string mark',
      { warn: { enter: '0.6' } },
      'Expected `warn.enter` to be a number in (0, 1], got `"0.6"` (string)',
    ],
    ['a mark that is not an object', { warn: 0.6 }, 'Expected `warn` to be an options object, got `0.6` (number)'],
    [
      'an unknown mark key',
      { warn: { enter: 0.6, leave: 0.5 } },
      'Expected `warn.leave` to be absent (unknown option; known: `enter`, `exit`), got `0.5` (number)',
    ],
    ['an unknown option', { minDwellMS: 5 }, 'Expected `options.minDwellMS` to be absent'],
    ['a negative dwell', { minDwellMs: -1 }, 'Expected `minDwellMs` to be a finite number ≥ 0, got `-1` (number)'],
    [
      'an infinite dwell',
      { minDwellMs: Number.POSITIVE_INFINITY },
      'Expected `minDwellMs` to be a finite number ≥ 0, got `Infinity` (number)',
    ],
    [
      'a zero retry bound',
      { maxRetryAfterMs: 0 },
      'Expected `maxRetryAfterMs` to be a finite number > 0, got `0` (number)',
    ],
    ['a clock that is not a function', { now: 5 }, 'Expected `now` to be a function, got `5` (number)'],
    [
      'a callback that is not a function',
      { onTransition: 'log' },
      'Expected `onTransition` to be a function, got `"log"` (string)',
    ],
    ['options that are not an object', null, 'Expected `options` to be an options object, got `null` (null)'],
    [
      'breaker options of the wrong type',
      { admissionBreaker: true },
      'Expected `admissionBreaker` to be an options object, got `true` (boolean)',
    ],
    [
      'a negative cooldown',
      { admissionBreaker: { cooldownMs: -5 } },
      'Expected `admissionBreaker.cooldownMs` to be a finite number ≥ 0, got `-5` (number)',
    ],
    [
      'zero probes',
      { admissionBreaker: { probes: 0 } },
      'Expected `admissionBreaker.probes` to be an integer ≥ 1, got `0` (number)',
    ],
    [
      'fractional probes',
      { admissionBreaker: { probes: 2.5 } },
      'Expected `admissionBreaker.probes` to be an integer ≥ 1, got `2.5` (number)',
    ],
    [
      'an unknown breaker key',
      { admissionBreaker: { cooldown: 5 } },
      'Expected `admissionBreaker.cooldown` to be absent',
    ],
    [
      'a breaker callback that is not a function',
      { admissionBreaker: { onStateChange: {} } },
      'Expected `admissionBreaker.onStateChange` to be a function, got `[object]` (object)',
    ],
  ]

  it.each(cases)('refuses %s', (_, options, message) => {
    expect(argumentError(configure(options)).message).toContain(message)
  })

  it('accepts partial marks, filling in the defaults', () => {
    const c = new WatermarkController({
      warn: { enter: 0.65 },
      reject: { exit: 0.9 },
      admissionBreaker: false,
      now: () => 0,
    })
    expect(c.watermarks).toEqual({
      warn: { enter: 0.65, exit: 0.5 },
      shed: { enter: 0.8, exit: 0.7 },
      reject: { enter: 0.95, exit: 0.9 },
    })
    expect(c.breaker).toBeUndefined()
  })
})

describe('WatermarkController bad input', () => {
  const c = new WatermarkController({ now: () => 0 })
  const badFills: [unknown, string][] = [
    [Number.NaN, '`NaN` (number)'],
    [-0.1, '`-0.1` (number)'],
    [Number.POSITIVE_INFINITY, '`Infinity` (number)'],
    ['0.5', '`"0.5"` (string)'],
    [undefined, '`undefined` (undefined)'],
  ]

  it.each(badFills)('update(%s) and decide(%s) are refused naming `fill`; nothing changes', (fill, shown) => {
    const message = `Expected \`fill\` to be a finite number ≥ 0, got ${shown}`
    expect(argumentError(() => c.update(fill as number)).message).toBe(message)
    expect(argumentError(() => c.decide(fill as number, 0, 0)).message).toBe(message)
    expect(c.stats().levels.normal.admitted).toBe(0)
  })

  it('refuses a NaN or non-number priority and threshold', () => {
    expect(argumentError(() => c.decide(0.1, Number.NaN, 0)).message).toBe(
      'Expected `priority` to be a number (not NaN), got `NaN` (number)',
    )
    expect(argumentError(() => c.decide(0.1, 0, '3' as unknown as number)).message).toBe(
      'Expected `shedAbove` to be a number (not NaN), got `"3"` (string)',
    )
    expect(c.stats().levels.normal.admitted).toBe(0)
  })
})
