import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { describeValue } from '../src/index.js'

describe('describeValue()', () => {
  it('quotes the value and names its kind', () => {
    expect(describeValue(0)).toBe('`0` (number)')
    expect(describeValue('x')).toBe('`"x"` (string)')
    expect(describeValue(null)).toBe('`null` (null)')
    expect(describeValue(undefined)).toBe('`undefined` (undefined)')
    expect(describeValue([1])).toBe('`[array]` (array)')
    expect(describeValue({})).toBe('`[object]` (object)')
    expect(describeValue(10n)).toBe('`10n` (bigint)')
    expect(describeValue(Symbol('s'))).toBe('`Symbol(s)` (symbol)')
    expect(describeValue(function named() {})).toBe('`[function named]` (function)')
  })

  it('renders hostile values without running their code', () => {
    const trap = () => {
      throw new Error('trap')
    }
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()
    expect(describeValue(new Proxy({}, { get: trap, getPrototypeOf: trap }))).toBe('`[object]` (object)')
    expect(describeValue(new Proxy(() => 1, { get: trap }))).toBe('`[function anonymous]` (function)')
    expect(describeValue(revoked.proxy)).toBe('`[object]` (object)')
    expect(describeValue(Object.create(null))).toBe('`[object]` (object)')
    expect(describeValue({ toString: trap, [Symbol.toPrimitive]: trap })).toBe('`[object]` (object)')
  })

  it('never throws and always quotes, whatever the value', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }), (value) => {
        expect(describeValue(value)).toMatch(
          /^`[\s\S]*` \((string|number|bigint|boolean|symbol|undefined|object|function|null|array)\)$/,
        )
      }),
    )
  })
})
