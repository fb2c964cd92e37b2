import { describe, expect, it } from 'vitest'
import { createLoop, InvalidArgumentError, type LoopOptions } from '../src/index.js'
import { thrown } from './fixtures.js'

const bad: [string, unknown, string][] = [
  ['capacity', 0, 'Expected `options.capacity` to be an integer from 1 to 1073741824, got `0` (number)'],
  ['capacity', -5, 'got `-5` (number)'],
  ['capacity', 1.5, 'got `1.5` (number)'],
  ['capacity', '100', 'got `"100"` (string)'],
  ['capacity', Number.NaN, 'got `NaN` (number)'],
  ['workers', 0, 'Expected `options.workers` to be an integer from 1 to 65536, got `0` (number)'],
  ['agingMs', -1, 'Expected `options.agingMs` to be a non-negative number or Infinity, got `-1` (number)'],
  ['agingMs', Number.NaN, 'got `NaN` (number)'],
  ['overflow', 'drop', "Expected `options.overflow` to be one of 'reject', 'drop-new', 'drop-oldest-lowest', 'wait'"],
  ['defaultPriority', 10, 'Expected `options.defaultPriority` to be an integer from 0 (most urgent) to 9, got `10`'],
  ['maxHops', -1, 'Expected `options.maxHops` to be a non-negative integer'],
  ['autoStart', 'yes', 'Expected `options.autoStart` to be a boolean, got `"yes"` (string)'],
  ['clock', { now: () => 0 }, 'Expected `options.clock.setTimeout` to be a function, got `undefined` (undefined)'],
  ['queue', 'fifo', "Expected `options.queue` to be one of 'levels', 'heap'"],
  ['capasity', 10, 'Expected `options.capasity` to be one of the known options'],
]

describe('createLoop()', () => {
  it.each(bad)('rejects options.%s = %o with a typed error', (key, value, message) => {
    const error = thrown(() => createLoop({ [key]: value } as LoopOptions))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toContain(message)
  })

  it('rejects options that are not an object', () => {
    const error = thrown(() => createLoop(42 as unknown as LoopOptions))
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error.message).toBe('Expected `options` to be an object, got `42` (number)')
  })

  it('applies the documented defaults', () => {
    const loop = createLoop()
    const { gauges } = loop.metrics()
    expect(gauges.capacity).toBe(10_000)
    expect(gauges.workers).toBe(8)
    expect(loop.state).toBe('running')
    expect(createLoop({ autoStart: false }).state).toBe('created')
  })
})

describe('resolveOptions()', () => {
  describe('backpressure', () => {
    it('refuses a bad mark with InvalidArgumentError naming options.backpressure.*, in the rule too', () => {
      const error = thrown(() => createLoop({ backpressure: { warn: { enter: 0.9 } } }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error).toMatchObject({ code: 'ERR_FLOWING_INVALID_ARGUMENT', argument: 'options.backpressure.shed.enter' })
      expect(error.message).toBe(
        'Expected `options.backpressure.shed.enter` to be above `options.backpressure.warn.enter` (0.9), got `0.8` (number)',
      )
      expect(thrown(() => createLoop({ backpressure: { admissionBreaker: { probes: 0 } } })).message).toBe(
        'Expected `options.backpressure.admissionBreaker.probes` to be an integer ≥ 1, got `0` (number)',
      )
      expect(thrown(() => createLoop({ backpressure: { minDwellMs: -1 } })).message).toBe(
        'Expected `options.backpressure.minDwellMs` to be a finite number ≥ 0, got `-1` (number)',
      )
    })

    it("refuses an unknown key listing the loop's keys, not the controller's", () => {
      const error = thrown(() => createLoop({ backpressure: { shedAbov: 1 } as never }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toBe(
        'Expected `options.backpressure.shedAbov` to be one of the known options (warn, shed, reject, minDwellMs, maxRetryAfterMs, admissionBreaker, shedAbove), got `1` (number); did you mean `shedAbove`?',
      )
    })

    it('refuses the now and onTransition the loop supplies, rather than silently replacing them', () => {
      const onTransition = thrown(() => createLoop({ backpressure: { onTransition: () => {} } as never }))
      expect(onTransition).toBeInstanceOf(InvalidArgumentError)
      expect(onTransition.message).toBe(
        "Expected `options.backpressure.onTransition` to be absent: the loop reports each transition as its `backpressure` event (`loop.events.on('backpressure', …)`), got `[function onTransition]` (function)",
      )
      const now = thrown(() => createLoop({ backpressure: { now: () => 0 } as never }))
      expect(now).toBeInstanceOf(InvalidArgumentError)
      expect(now.message).toBe(
        "Expected `options.backpressure.now` to be absent: the loop's `clock` option is its time source, got `[function now]` (function)",
      )
    })
  })

  describe('stall', () => {
    it('refuses a bad setting with InvalidArgumentError naming options.stall.*', () => {
      const error = thrown(() => createLoop({ stall: { intervalMs: 0 } }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toBe(
        'Expected `options.stall.intervalMs` to be a finite number of ms > 0, got `0` (number)',
      )
      expect(thrown(() => createLoop({ stall: { intervalMS: 5 } as never })).message).toBe(
        'Expected `options.stall.intervalMS` to be one of the known options (intervalMs, blockedMs, noProgressMs), got `5` (number); did you mean `intervalMs`?',
      )
      expect(thrown(() => createLoop({ stall: 'yes' as never })).message).toBe(
        'Expected `options.stall` to be a boolean or an options object, got `"yes"` (string)',
      )
    })

    it('refuses the onStall, timers, busy and describeRunning the loop supplies', () => {
      const onStall = thrown(() => createLoop({ stall: { onStall: () => {} } as never }))
      expect(onStall).toBeInstanceOf(InvalidArgumentError)
      expect(onStall.message).toBe(
        "Expected `options.stall.onStall` to be absent: the loop reports each stall as its `stall` event (`loop.events.on('stall', …)`), got `[function onStall]` (function)",
      )
      for (const key of ['timers', 'busy', 'describeRunning']) {
        const error = thrown(() => createLoop({ stall: { [key]: () => true } as never }))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect(error.message).toMatch(new RegExp(`^Expected \`options\\.stall\\.${key}\` to be absent: `))
      }
    })
  })
})
