import { describe, expect, it, vi } from 'vitest'
import { BackpressureArgumentError, WatermarkController } from '../src/index.js'

describe('the renamed breaker option', () => {
  it('accepts `breaker` as `admissionBreaker` with one deprecation warning, refuses both, suggests typos', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
    try {
      const old = new WatermarkController({ now: () => 0, breaker: { probes: 3 } })
      expect(old.breaker?.probes).toBe(3)
      expect(new WatermarkController({ now: () => 0, breaker: false }).breaker).toBeUndefined()
      expect(warn.mock.calls.map((c) => (c[1] as { code: string }).code)).toEqual(['FLOWING_DEP_ADMISSION_BREAKER'])
      const both = (() => {
        try {
          new WatermarkController({ breaker: false, admissionBreaker: {} })
        } catch (error) {
          return error
        }
        return undefined
      })()
      expect(both).toBeInstanceOf(BackpressureArgumentError)
      expect((both as Error).message).toBe(
        'Expected `breaker` to be absent when `admissionBreaker` is given (`breaker` is its deprecated name), got `false` (boolean)',
      )
      expect(() => new WatermarkController({ admisionBreaker: false } as never)).toThrow(
        'did you mean `admissionBreaker`?',
      )
    } finally {
      warn.mockRestore()
    }
  })
})
