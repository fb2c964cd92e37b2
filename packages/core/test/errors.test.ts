import { BackpressureArgumentError } from '@flowing/backpressure'
import { WheelFullError } from '@flowing/timing-wheel'
import { FencedError, HandlerTimeoutError } from '@flowing/watchdog'
import { describe, expect, it } from 'vitest'
import {
  describeValue,
  FlowingError,
  HopLimitError,
  InvalidArgumentError,
  isFlowingError,
  NonRetryableError,
  QueueFullError,
  UnknownMessageTypeError,
  UnknownRouteError,
} from '../src/index.js'

describe('describeValue()', () => {
  it('quotes the value and names its kind', () => {
    expect(describeValue(0)).toBe('`0` (number)')
    expect(describeValue('x')).toBe('`"x"` (string)')
    expect(describeValue(null)).toBe('`null` (null)')
    expect(describeValue(undefined)).toBe('`undefined` (undefined)')
    expect(describeValue(Number.NaN)).toBe('`NaN` (number)')
    expect(describeValue([1])).toBe('`[array]` (array)')
    expect(describeValue({})).toBe('`[object]` (object)')
    expect(describeValue(10n)).toBe('`10n` (bigint)')
    expect(describeValue(function named() {})).toBe('`[function named]` (function)')
  })
})

describe('FlowingError subclasses', () => {
  it('carry a stable code, their class name and the live numbers', () => {
    const full = new QueueFullError('work', { queued: 8, capacity: 8, running: 2, waitingProducers: 1 })
    expect(full).toBeInstanceOf(FlowingError)
    expect(full.name).toBe('QueueFullError')
    expect(full.code).toBe('ERR_FLOWING_QUEUE_FULL')
    expect(full.message).toBe('Queue is full: cannot admit `work` (8/8 queued, 2 running, 1 producers waiting)')
    expect(full.load.capacity).toBe(8)
  })

  it('name the argument, the rule and the value', () => {
    const e = new InvalidArgumentError('capacity', 'a positive integer', 0)
    expect(e.message).toBe('Expected `capacity` to be a positive integer, got `0` (number)')
    expect(e.argument).toBe('capacity')
    expect(e.value).toBe(0)
  })

  it('carry the rule as a field, for code that re-reports the error under another name', () => {
    const e = new InvalidArgumentError('options.ttlMs', 'a positive integer (ms)', -1, { hint: 'say so' })
    expect(e.rule).toBe('a positive integer (ms)')
    expect(e.message).toBe('Expected `options.ttlMs` to be a positive integer (ms), got `-1` (number); say so')
  })

  it('list what is registered when a type or route is unknown', () => {
    expect(new UnknownMessageTypeError('ordr.paid', ['order.paid']).message).toBe(
      'No handler registered for message type `"ordr.paid"` (string); registered types: `order.paid`',
    )
    expect(new UnknownRouteError('order.updated', 'lost', ['paid']).message).toContain('routes: `paid`')
    expect(new HopLimitError('work', 17, 16).message).toBe(
      'Follow-up `work` would be 17 hops deep; the limit is maxHops = 16',
    )
  })
})

describe('FlowingError', () => {
  describe('[Symbol.hasInstance]()', () => {
    it('holds for the errors of every Flowing package', () => {
      const timeout = new HandlerTimeoutError({
        label: 'work',
        epoch: 1,
        kind: 'deadline',
        timeoutMs: 5,
        heartbeatMs: 0,
        elapsedMs: 5,
        sinceHeartbeatMs: 5,
      })
      const errors = [
        timeout,
        new FencedError('work', 1, 'timed-out', 'ctx.post'),
        new WheelFullError(1, 1),
        new BackpressureArgumentError('fill', 'a number', Number.NaN),
        new NonRetryableError('no'),
      ]
      for (const error of errors) {
        expect(error).toBeInstanceOf(FlowingError)
        expect(isFlowingError(error)).toBe(true)
        expect(typeof error.code).toBe('string')
        expect(error.name).toBe(error.constructor.name)
      }
    })
  })
})
