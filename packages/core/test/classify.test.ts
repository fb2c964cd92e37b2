import { flowingErrorBrand } from '@flowing/errors'
import { describe, expect, it, vi } from 'vitest'
import { defaultClassify, NonRetryableError } from '../src/index.js'
import { virtualLoop } from './fixtures.js'

/** The error classes of a second installed copy of @flowing/core (a separate module instance). */
async function secondCopy(): Promise<typeof import('../src/errors.js')> {
  vi.resetModules()
  const specifier = '../src/errors.js?second-copy' // a query string makes a separate module instance
  const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('../src/errors.js')
  vi.resetModules()
  return copy
}

/** An error of a copy that shares nothing with this one, not even @flowing/errors: only brand and code. */
function foreign(code: string, names: string[]): Error {
  const error = new Error('from a copy that shares no module')
  Object.defineProperty(error, 'code', { value: code })
  Object.defineProperty(error, flowingErrorBrand, { value: Object.freeze(names) })
  return error
}

describe('classify', () => {
  describe('defaultClassify()', () => {
    it('classifies the errors of a second copy of @flowing/core by their code, not their prototype', async () => {
      const copy = await secondCopy()
      expect(copy.NonRetryableError).not.toBe(NonRetryableError)
      expect(defaultClassify(new copy.NonRetryableError('declined'))).toBe('non-retryable')
      expect(defaultClassify(new copy.RetryableError('503'))).toBe('retryable')
    })

    it('classifies a branded error of a copy that shares no module by brand and code', () => {
      expect(defaultClassify(foreign('ERR_FLOWING_NON_RETRYABLE', ['NonRetryableError', 'FlowingError']))).toBe(
        'non-retryable',
      )
      expect(defaultClassify(foreign('ERR_FLOWING_RETRYABLE', ['RetryableError', 'FlowingError']))).toBe('retryable')
      expect(
        defaultClassify(foreign('ERR_HANDLER_TIMEOUT', ['HandlerTimeoutError', 'WatchdogError', 'FlowingError'])),
      ).toBe('retryable')
    })

    it('classifies an unbranded error of an older copy by its code alone', () => {
      const older = (code: string) => Object.assign(new Error('from a copy without brands'), { code })
      expect(defaultClassify(older('ERR_FLOWING_NON_RETRYABLE'))).toBe('non-retryable')
      expect(defaultClassify(older('ERR_FLOWING_RETRYABLE'))).toBe('retryable')
      expect(defaultClassify(older('ERR_HANDLER_TIMEOUT'))).toBe('retryable')
    })

    it('keeps the class of a user subclass of NonRetryableError', () => {
      class CardDeclinedError extends NonRetryableError {}
      expect(defaultClassify(new CardDeclinedError('declined'))).toBe('non-retryable')
    })
  })
})

describe('Loop', () => {
  describe('on()', () => {
    it('dead-letters a NonRetryableError of a second copy at its first attempt', async () => {
      const copy = await secondCopy()
      const { loop, clock } = virtualLoop({ retry: { maxAttempts: 5, unknownMaxAttempts: 5 }, random: () => 0.5 })
      let attempts = 0
      loop.on('work', () => {
        attempts++
        throw new copy.NonRetryableError('bad payload')
      })
      loop.post('work', 1)
      await clock.run()
      expect(attempts).toBe(1)
      expect(loop.metrics().counters).toMatchObject({ deadLettered: 1, retried: 0 })
    })
  })
})
