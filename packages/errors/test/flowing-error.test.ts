import { describe, expect, it, vi } from 'vitest'
import { errorCode, FlowingError, flowingErrorBrand, isFlowingError } from '../src/index.js'

class QuotaError extends FlowingError {
  constructor() {
    super('ERR_APP_QUOTA', 'quota exceeded')
  }
}
class HardQuotaError extends QuotaError {}

/** A class family of a second installed copy: same names, same brand, other identities. */
function secondCopy() {
  const lineage = (names: string[]) => Object.freeze(names)
  class Base extends Error {
    constructor(names: string[], code: string) {
      super('from the other copy')
      Object.defineProperty(this, 'code', { value: code })
      Object.defineProperty(this, flowingErrorBrand, { value: lineage(names) })
    }
  }
  return {
    quota: new Base(['QuotaError', 'FlowingError'], 'ERR_APP_QUOTA'),
    hard: new Base(['HardQuotaError', 'QuotaError', 'FlowingError'], 'ERR_APP_QUOTA'),
  }
}

const hostileProxy = new Proxy(
  {},
  {
    get() {
      throw new Error('get trap')
    },
    getPrototypeOf() {
      throw new Error('getPrototypeOf trap')
    },
  },
)

describe('FlowingError', () => {
  describe('constructor()', () => {
    it('sets the code, the class name, the cause and the brand listing the class names', () => {
      const cause = new Error('root')
      const error = new FlowingError('ERR_X', 'boom', { cause })
      expect([error.code, error.name, error.message, error.cause]).toEqual(['ERR_X', 'FlowingError', 'boom', cause])
      expect((error as unknown as Record<symbol, unknown>)[flowingErrorBrand]).toEqual(['FlowingError'])
      expect((new HardQuotaError() as unknown as Record<symbol, unknown>)[flowingErrorBrand]).toEqual([
        'HardQuotaError',
        'QuotaError',
        'FlowingError',
      ])
    })

    it('keeps the brand out of enumeration and JSON', () => {
      const error = new QuotaError()
      expect(Object.getOwnPropertySymbols(error)).toEqual([flowingErrorBrand])
      expect(Object.keys(error)).toEqual(['code', 'name'])
      expect(JSON.stringify(error)).toBe('{"code":"ERR_APP_QUOTA","name":"QuotaError"}')
    })
  })

  describe('[Symbol.hasInstance]()', () => {
    it('follows the prototype chain within one copy', () => {
      expect(new HardQuotaError()).toBeInstanceOf(QuotaError)
      expect(new HardQuotaError()).toBeInstanceOf(FlowingError)
      expect(new QuotaError() instanceof HardQuotaError).toBe(false)
      expect(new Error('plain') instanceof FlowingError).toBe(false)
    })

    it('accepts an error of another copy whose brand names the class', () => {
      const { quota, hard } = secondCopy()
      expect(quota instanceof FlowingError).toBe(true)
      expect(quota instanceof QuotaError).toBe(true)
      expect(quota instanceof HardQuotaError).toBe(false)
      expect(hard instanceof HardQuotaError).toBe(true)
    })

    it('holds across two module instances of @flowing/errors itself', async () => {
      vi.resetModules()
      const specifier = '../src/flowing-error.js?second-copy' // a query string makes a separate module instance
      const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('../src/flowing-error.js')
      expect(copy.FlowingError).not.toBe(FlowingError)
      class CopiedQuotaError extends copy.FlowingError {}
      expect(new copy.FlowingError('ERR_X', 'other copy')).toBeInstanceOf(FlowingError)
      expect(new QuotaError()).toBeInstanceOf(copy.FlowingError)
      expect(new CopiedQuotaError('ERR_X', 'x') instanceof QuotaError).toBe(false)
      expect(isFlowingError(new CopiedQuotaError('ERR_X', 'x'))).toBe(true)
    })

    it('answers false, never throws, for primitives and hostile values', () => {
      const revoked = Proxy.revocable({}, {})
      revoked.revoke()
      for (const value of [undefined, null, 0, 'x', Symbol('s'), hostileProxy, revoked.proxy, Object.create(null)]) {
        expect(value instanceof FlowingError).toBe(false)
        expect(value instanceof QuotaError).toBe(false)
      }
    })
  })
})

describe('isFlowingError()', () => {
  it('is true for a branded value of any copy and false for anything else', () => {
    expect(isFlowingError(new QuotaError())).toBe(true)
    expect(isFlowingError(secondCopy().quota)).toBe(true)
    expect(isFlowingError(new Error('plain'))).toBe(false)
    expect(isFlowingError(hostileProxy)).toBe(false)
    expect(isFlowingError({ [flowingErrorBrand]: 'not a list' })).toBe(false)
  })
})

describe('errorCode()', () => {
  it('reads a string code and gives undefined for anything else, hostile values included', () => {
    expect(errorCode(new QuotaError())).toBe('ERR_APP_QUOTA')
    expect(errorCode(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe('ECONNRESET')
    expect(errorCode({ code: 7 })).toBeUndefined()
    expect(errorCode('ERR_X')).toBeUndefined()
    expect(errorCode(hostileProxy)).toBeUndefined()
    expect(
      errorCode({
        get code() {
          throw new Error('getter')
        },
      }),
    ).toBeUndefined()
  })
})
