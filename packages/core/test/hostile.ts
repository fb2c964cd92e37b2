/**
 * Hostile values for property tests: what a handler, a classifier or a user callback may throw at the
 * loop. Each is built to break code that assumes a thrown value is a well-behaved `Error`: reading a
 * property, converting it to a string, checking its prototype or walking its `cause` must all be
 * guarded.
 *
 * Reuse: `fc.assert(fc.property(hostileValue(), (thrown) => { const value = thrown.make(); … }))`, or
 * {@link hostileOrAnything} to mix them with `fc.anything()`. {@link HOSTILE_CASES} lists one named instance of each kind for
 * table tests.
 *
 * @module
 */
import fc from 'fast-check'

/** What a trap or getter throws: an error, or — worse — another hostile value. */
const trap = (): never => {
  throw new Error('hostile trap')
}
const trapHostile = (): never => {
  throw throwingProxy({})
}

/** A Proxy on `target` whose every trap throws (`get`, `has`, `getPrototypeOf`, `ownKeys` …). */
export function throwingProxy<T extends object>(target: T): T {
  return new Proxy(target, {
    get: trap,
    set: trap,
    has: trap,
    deleteProperty: trap,
    ownKeys: trap,
    getOwnPropertyDescriptor: trap,
    defineProperty: trap,
    getPrototypeOf: trap,
    setPrototypeOf: trap,
    isExtensible: trap,
    preventExtensions: trap,
    apply: trap,
    construct: trap,
  })
}

/** A Proxy that has been revoked: every operation on it throws, `Array.isArray` included. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

/** An `Error` whose property `key` is a getter that throws (a hostile value, with `worse`). */
export function errorWithThrowingGetter(key: string, worse = false): Error {
  const error = new Error('has a throwing getter')
  Object.defineProperty(error, key, { get: worse ? trapHostile : trap, configurable: true })
  return error
}

/** An object whose string conversions all throw (`toString`, `valueOf`, `Symbol.toPrimitive`). */
export function unprintable(): object {
  return { toString: trap, valueOf: trap, [Symbol.toPrimitive]: trap }
}

/** Two errors that are each other's `cause`. */
export function cyclicCause(): Error {
  const a = new Error('a')
  const b = new Error('b', { cause: a })
  Object.defineProperty(a, 'cause', { value: b })
  return a
}

/** An error with a `cause` chain `depth` levels deep. */
export function deepCause(depth: number): Error {
  let error = new Error('root')
  for (let i = 1; i < depth; i++) error = new Error(`level ${i}`, { cause: error })
  return error
}

/** One named instance of each hostile kind, for table tests (`it.each`). */
export const HOSTILE_CASES: readonly (readonly [name: string, make: () => unknown])[] = [
  ['a null-prototype object', () => Object.create(null)],
  ['a null-prototype object with a message', () => Object.assign(Object.create(null), { message: 'm' })],
  ['a frozen object', () => Object.freeze({ message: 'frozen', retryable: true })],
  ['a symbol', () => Symbol('thrown')],
  ['a Proxy whose traps all throw', () => throwingProxy({})],
  ['a Proxy of an Error whose traps all throw', () => throwingProxy(new Error('inside'))],
  ['a Proxy of a function whose traps all throw', () => throwingProxy(() => 1)],
  ['a revoked Proxy', revokedProxy],
  ['an Error whose message getter throws', () => errorWithThrowingGetter('message')],
  ['an Error whose name getter throws', () => errorWithThrowingGetter('name')],
  ['an Error whose stack getter throws', () => errorWithThrowingGetter('stack')],
  ['an Error whose cause getter throws', () => errorWithThrowingGetter('cause')],
  ['an Error whose code getter throws', () => errorWithThrowingGetter('code')],
  ['an Error whose retryable getter throws', () => errorWithThrowingGetter('retryable')],
  ['an Error whose message getter throws a hostile value', () => errorWithThrowingGetter('message', true)],
  ['an object whose toString throws', unprintable],
  ['an Error whose cause is unprintable', () => new Error('outer', { cause: unprintable() })],
  ['an Error whose cause is a throwing Proxy', () => new Error('outer', { cause: throwingProxy({}) })],
  ['an Error whose causes form a cycle', cyclicCause],
  ['an Error with a 50-level cause chain', () => deepCause(50)],
  ['an Error whose message is not a string', () => Object.assign(new Error(), { message: { not: 'a string' } })],
  ['a function', () => function thrown() {}],
]

/**
 * A recipe for a thrown value. Property tests get recipes, not the values: fast-check inspects what it
 * generates (to clone and print it), and a hostile value would break fast-check itself. Call `make()`
 * inside the property for a fresh value.
 */
export interface Thrown {
  /** What `make()` builds, for the counterexample report. */
  readonly label: string
  /** Builds a fresh instance of the value. */
  make(): unknown
}

const recipe = (label: string, make: () => unknown): Thrown => {
  const thrown = { label, make, [fc.toStringMethod]: () => label }
  return thrown
}

/**
 * Any hostile value of {@link HOSTILE_CASES}, or one built from random parts: an `Error` with a random
 * message and throwing getters on random keys, or an `Error` whose `cause` is anything.
 */
export function hostileValue(): fc.Arbitrary<Thrown> {
  const named = fc.constantFrom(...HOSTILE_CASES).map(([label, make]) => recipe(label, make))
  const getters = fc
    .record({
      message: fc.string(),
      keys: fc.subarray(['message', 'name', 'stack', 'cause', 'code', 'retryable', 'then']),
      worse: fc.boolean(),
    })
    .map(({ message, keys, worse }) =>
      recipe(`an Error(${JSON.stringify(message)}) with throwing getters ${keys.join(', ')}`, () => {
        const error = new Error(message)
        void error.stack // V8 formats the stack lazily, reading `name`: format it before `name` turns hostile
        for (const key of keys) Object.defineProperty(error, key, { get: worse ? trapHostile : trap })
        return error
      }),
    )
  const wrapped = fc
    .oneof(
      fc.constantFrom(...HOSTILE_CASES),
      fc.anything().map((v) => [fc.stringify(v), () => v] as const),
    )
    .map(([label, make]) => recipe(`an Error caused by ${label}`, () => new Error('wraps', { cause: make() })))
  return fc.oneof(named, getters, wrapped)
}

/** `fc.anything()` (with null prototypes, bigints, maps, sets, boxed values) mixed with {@link hostileValue}. */
export function hostileOrAnything(): fc.Arbitrary<Thrown> {
  const anything = fc
    .anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true, withBoxedValues: true })
    .map((value) => recipe(fc.stringify(value), () => value))
  return fc.oneof(anything, hostileValue())
}
