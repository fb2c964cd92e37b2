/**
 * Values that break naive code: traps and getters that throw, symbols, BigInt, cycles — for the
 * property tests of everything that must describe or check any value without throwing.
 */
import fc from 'fast-check'

const trap = (): never => {
  throw new Error('trap')
}

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

function cyclic(): object {
  const node: Record<string, unknown> = { name: 'node' }
  node['self'] = node
  node['list'] = [node]
  return node
}

/** Every hostile value, freshly built. */
export function hostileValues(): unknown[] {
  const allTraps = {
    get: trap,
    has: trap,
    ownKeys: trap,
    getOwnPropertyDescriptor: trap,
    getPrototypeOf: trap,
    apply: trap,
    construct: trap,
  }
  return [
    new Proxy({}, allTraps),
    new Proxy(() => 1, allTraps),
    new Proxy([], allTraps),
    revoked(),
    Object.defineProperty({}, 'capacity', { get: trap, enumerable: true }),
    { toString: trap, valueOf: trap, [Symbol.toPrimitive]: trap },
    Object.create(null),
    Symbol('s'),
    Symbol.for('registered'),
    10n ** 30n,
    -1n,
    cyclic(),
    Number.NaN,
    Number.NEGATIVE_INFINITY,
    -0,
    '\u0000\ud800',
  ]
}

/**
 * Any value, built when called: fast-check's anything (BigInt, null prototypes, Maps, Sets), a hostile
 * value, or an object holding hostile values. A maker rather than the value because fast-check reads
 * properties of what it generates (a clone method), which the traps would answer by throwing inside
 * the generator.
 */
export const anyValue: fc.Arbitrary<() => unknown> = fc.oneof(
  fc
    .anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true, withBoxedValues: true })
    .map((value) => () => value),
  fc.nat({ max: hostileValues().length - 1 }).map((i) => () => hostileValues()[i]),
  fc
    .dictionary(fc.string(), fc.nat({ max: hostileValues().length - 1 }), { maxKeys: 3 })
    .map((picks) => () => Object.fromEntries(Object.entries(picks).map(([k, i]) => [k, hostileValues()[i]]))),
)
