import { describe, expect, it } from 'vitest'
import {
  describeValue,
  TimingWheel,
  TimingWheelError,
  type TimingWheelOptions,
  WheelArgumentError,
  WheelDriver,
  type WheelDriverOptions,
  WheelFullError,
} from '../src/index.js'
import { FakeTimers } from './fixtures.js'

const DELAY = 'a number from 0 to 9007199254740991'
const TIME = 'a finite number ≥ 0'

/** Runs `act` and returns the WheelArgumentError it throws (failing if it throws anything else). */
function argumentError(act: () => unknown): WheelArgumentError {
  try {
    act()
  } catch (error) {
    expect(error).toBeInstanceOf(WheelArgumentError)
    return error as WheelArgumentError
  }
  throw new Error('expected a WheelArgumentError, nothing was thrown')
}

describe('errors', () => {
  it('carry a stable code, their class name, and the argument, rule and value', () => {
    const e = new WheelArgumentError('delayMs', DELAY, Number.NaN)
    expect(e).toBeInstanceOf(TimingWheelError)
    expect([e.name, e.code, e.argument]).toEqual(['WheelArgumentError', 'ERR_TIMING_WHEEL_INVALID_ARGUMENT', 'delayMs'])
    expect(e.message).toBe(`Expected \`delayMs\` to be ${DELAY}, got \`NaN\` (number)`)
    const full = new WheelFullError(1_000_000, 1_000_000)
    expect([full.name, full.code, full.pending, full.maxPending]).toEqual([
      'WheelFullError',
      'ERR_TIMING_WHEEL_FULL',
      1_000_000,
      1_000_000,
    ])
    expect(full.message).toBe(
      'Timing wheel is full: cannot schedule another timer (1000000 pending, maxPending = 1000000)',
    )
  })

  it('quote values with their kind', () => {
    expect(describeValue('5')).toBe('`"5"` (string)')
    expect(describeValue(null)).toBe('`null` (null)')
    expect(describeValue([])).toBe('`[array]` (array)')
    expect(describeValue(() => 1)).toBe('`[function anonymous]` (function)')
    expect(describeValue(1n)).toBe('`1n` (bigint)')
    expect(describeValue(Symbol('s'))).toBe('`Symbol(s)` (symbol)')
  })
})

describe('TimingWheel bad input', () => {
  const wheel = new TimingWheel<string>({ now: () => 100 })
  const bad: [unknown, string][] = [
    [Number.NaN, '`NaN` (number)'],
    [-1, '`-1` (number)'],
    [Number.POSITIVE_INFINITY, '`Infinity` (number)'],
    ['5', '`"5"` (string)'],
    [undefined, '`undefined` (undefined)'],
    [null, '`null` (null)'],
  ]

  it.each(bad)('schedule(%s) is refused naming `delayMs`; nothing is scheduled', (value, shown) => {
    const e = argumentError(() => wheel.schedule(value as number, 'x'))
    expect(e.message).toBe(`Expected \`delayMs\` to be ${DELAY}, got ${shown}`)
    expect(wheel.size).toBe(0)
  })

  it('refuses delays above Number.MAX_SAFE_INTEGER', () => {
    expect(argumentError(() => wheel.schedule(2 ** 53, 'x')).message).toContain('got `9007199254740992` (number)')
  })

  it.each(bad)('scheduleAt(%s), add(%s) and advance(%s) are refused naming the argument', (value, shown) => {
    expect(argumentError(() => wheel.scheduleAt(value as number, 'x')).message).toBe(
      `Expected \`at\` to be ${TIME}, got ${shown}`,
    )
    expect(argumentError(() => wheel.add(value as number, 'x')).argument).toBe('deadline')
    if (value !== undefined) expect(argumentError(() => wheel.advance(value as number)).argument).toBe('now')
    expect(wheel.size).toBe(0)
  })

  it.each([0, -1, 1.5, Number.NaN, '2'])('advance(now, %s) refuses the limit', (limit) => {
    const e = argumentError(() => wheel.advance(100, limit as number))
    expect(e.message).toMatch(/^Expected `limit` to be a positive integer or Infinity, got /)
  })

  it('refuses a clock that returns garbage, at construction and at schedule()', () => {
    expect(argumentError(() => new TimingWheel({ now: () => Number.NaN })).message).toBe(
      `Expected \`now()\` to be ${TIME}, got \`NaN\` (number)`,
    )
    let time = 0
    const drifting = new TimingWheel<string>({ now: () => time })
    time = -5
    expect(argumentError(() => drifting.schedule(1, 'x')).argument).toBe('now()')
  })

  const badOptions: [string, unknown, string][] = [
    ['tickMs', 0, 'a number from 0.001 to 3600000, got `0` (number)'],
    ['tickMs', -1, 'a number from 0.001 to 3600000, got `-1` (number)'],
    ['tickMs', Number.NaN, 'a number from 0.001 to 3600000, got `NaN` (number)'],
    ['tickMs', '1', 'a number from 0.001 to 3600000, got `"1"` (string)'],
    ['maxPending', 0, 'an integer from 1 to 16000000, got `0` (number)'],
    ['maxPending', 1.5, 'an integer from 1 to 16000000, got `1.5` (number)'],
    ['maxPending', 2e7, 'an integer from 1 to 16000000, got `20000000` (number)'],
    ['now', 42, 'a function, got `42` (number)'],
    ['tickMS', 5, 'absent (unknown option; known: `now`, `tickMs`, `maxPending`), got `5` (number)'],
  ]

  it.each(badOptions)('refuses options.%s = %s', (key, value, rest) => {
    const e = argumentError(() => new TimingWheel({ [key]: value } as TimingWheelOptions))
    expect(e.message).toBe(`Expected \`options.${key}\` to be ${rest}`)
  })

  it('refuses options that are not an object', () => {
    for (const options of [null, 5, []]) {
      expect(argumentError(() => new TimingWheel(options as TimingWheelOptions)).argument).toBe('options')
    }
  })
})

describe('WheelDriver bad input', () => {
  const onDue = (): void => {}
  const make = (options: Partial<WheelDriverOptions<string>>) => () =>
    new WheelDriver<string>({ onDue, timers: new FakeTimers(), ...options } as WheelDriverOptions<string>)

  it('refuses a missing or non-function onDue', () => {
    expect(argumentError(make({ onDue: undefined as never })).message).toBe(
      'Expected `options.onDue` to be a function, got `undefined` (undefined)',
    )
    expect(argumentError(() => new WheelDriver(undefined as never)).argument).toBe('options')
  })

  it.each([0, -3, 2.5, Number.NaN])('refuses budget %s', (budget) => {
    expect(argumentError(make({ budget })).argument).toBe('options.budget')
  })

  it('refuses a non-boolean unref, a bad timer provider and wheel options', () => {
    expect(argumentError(make({ unref: 'yes' as never })).message).toBe(
      'Expected `options.unref` to be a boolean, got `"yes"` (string)',
    )
    expect(argumentError(make({ timers: { now: () => 0 } as never })).argument).toBe('options.timers')
    expect(argumentError(make({ tickMs: 0 })).argument).toBe('options.tickMs')
    expect(argumentError(make({ maxPending: -1 })).argument).toBe('options.maxPending')
    expect(argumentError(make({ budjet: 5 } as never)).argument).toBe('options.budjet')
  })

  it('refuses bad delays and times, scheduling nothing and arming nothing', () => {
    const timers = new FakeTimers()
    const driver = new WheelDriver<string>({ onDue, timers })
    expect(argumentError(() => driver.schedule(Number.NaN, 'x')).argument).toBe('delayMs')
    expect(argumentError(() => driver.scheduleAt(-1, 'x')).argument).toBe('at')
    expect(argumentError(() => driver.add(Number.POSITIVE_INFINITY, 'x')).argument).toBe('deadline')
    expect([driver.size, timers.timeouts.size]).toEqual([0, 0])
  })
})
