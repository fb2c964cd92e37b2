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
