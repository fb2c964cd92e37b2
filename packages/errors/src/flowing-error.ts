/**
 * The base class of every error a Flowing package throws or reports, and the brand that identifies one
 * without trusting the prototype chain.
 *
 * @module
 */

/**
 * The key of the brand every {@link FlowingError} carries: `Symbol.for('flowing.error')`, the same
 * symbol in every installed copy of every Flowing package (and in every realm).
 *
 * @remarks The brand's value is the frozen list of class names from the instance's own class up to
 * `FlowingError`, e.g. `['HandlerTimeoutError', 'WatchdogError', 'FlowingError']`, with the lines of
 * the classes a class joins through {@link flowingErrorFamilies} after its own name. It is what makes
 * `instanceof` hold across copies (see {@link FlowingError}); an object of your own that must pass for
 * a Flowing error of another copy can carry it too (non-enumerable, as the constructor defines it).
 *
 * @group Errors
 */
export const flowingErrorBrand: unique symbol = Symbol.for('flowing.error')

/**
 * The key of a static property by which a class of the family joins other classes besides its own
 * line: `static readonly [flowingErrorFamilies] = [TimingWheelError]` makes every instance an
 * `instanceof TimingWheelError` too, although the class extends another one.
 *
 * @remarks JavaScript classes have one parent. A package's argument error extends
 * {@link ArgumentError} (its fields and message) and still belongs to its package's family (one
 * `catch` for every error of the package): the names of the listed classes' lines join the instance's
 * brand (see {@link flowingErrorBrand}), and `instanceof` reads the brand.
 *
 * @example
 * ```ts
 * import { ArgumentError, FlowingError, flowingErrorFamilies } from '@flowing/errors'
 *
 * class QueueError extends FlowingError {}
 * class QueueArgumentError extends ArgumentError {
 *   static readonly [flowingErrorFamilies] = [QueueError]
 *   static override readonly code = 'ERR_QUEUE_INVALID_ARGUMENT'
 * }
 * const error = new QueueArgumentError('capacity', 'an integer ≥ 1', 0)
 * console.log(error instanceof QueueError, error instanceof ArgumentError) // true true
 * ```
 *
 * @group Errors
 */
export const flowingErrorFamilies: unique symbol = Symbol.for('flowing.error.families')

/**
 * A class that {@link flowingErrorFamilies} can name: any class of the family.
 *
 * @group Errors
 */
export type FlowingErrorClass = abstract new (...args: never[]) => FlowingError

// Lineages per concrete class, computed once: constructing an error under overload stays a map lookup.
const lineages = new WeakMap<object, readonly string[]>()

/**
 * Base class of every Flowing error: `@flowing/core`, `@flowing/timing-wheel`, `@flowing/backpressure`
 * and `@flowing/watchdog` all extend this one class, so one `catch (e) { if (e instanceof FlowingError) … }`
 * covers them all.
 *
 * @remarks
 * **Stable codes.** Switch on {@link FlowingError.code} (stable across versions), not on the message
 * (meant for humans). Each package narrows the type of `code` to its own codes.
 *
 * **`instanceof` across copies.** Two installed copies of a package (a hoisting accident, a bundled
 * dependency) each have their own classes, so a plain prototype check would say an error of one copy is
 * not an instance of the other's class — and a `NonRetryableError` would be retried. Every instance
 * therefore carries a brand under {@link flowingErrorBrand} listing its class names, and
 * `instanceof FlowingError` (or any subclass) accepts an object whose brand names the class. For your
 * own subclasses this means: give them distinct names (the brand compares names, not identities).
 *
 * **Total.** `instanceof` with any class of this family never throws, not even for a `Proxy` whose
 * traps all throw (it answers `false`).
 *
 * @example
 * ```ts
 * import { FlowingError } from '@flowing/errors'
 *
 * class QuotaError extends FlowingError {
 *   constructor(used: number, limit: number) {
 *     super('ERR_APP_QUOTA', `Quota exceeded: ${used} of ${limit} used`)
 *   }
 * }
 * const error = new QuotaError(11, 10)
 * console.log(error instanceof FlowingError, error.code, error.name) // true ERR_APP_QUOTA QuotaError
 * ```
 *
 * @group Errors
 */
export class FlowingError extends Error {
  /** Stable machine-readable code, e.g. `ERR_FLOWING_QUEUE_FULL`. */
  readonly code: string

  /**
   * @param code - the stable code of the subclass
   * @param message - a human-readable message naming the value, the rule and the live numbers
   * @param options - standard `ErrorOptions` (`cause`)
   */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = new.target.name
    Object.defineProperty(this, flowingErrorBrand, { value: lineageOf(new.target), enumerable: false })
  }

  /**
   * `value instanceof FlowingError` (or a subclass): the prototype chain, or else the brand.
   *
   * @param value - anything
   * @returns true if `value` is an instance of this class, of this copy or of another one
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    try {
      // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked about, a subclass too
      if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    } catch {
      // A Proxy whose getPrototypeOf trap throws: only the brand can tell.
    }
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked about, a subclass too
    return brandNames(value, this.name)
  }
}

/**
 * Whether `value` is a Flowing error of any package and any installed copy (it carries the brand).
 * Never throws.
 *
 * @param value - anything, e.g. a caught value
 *
 * @group Errors
 */
export function isFlowingError(value: unknown): value is FlowingError {
  return brandNames(value, 'FlowingError')
}

/**
 * The `code` of a thrown value — a Flowing error's, or a Node.js system error's (`ECONNRESET`) — if it
 * has a string one. Never throws, not even for a `Proxy` or a throwing getter.
 *
 * @param value - anything, e.g. a caught value
 * @returns the code, or `undefined`
 *
 * @group Errors
 */
export function errorCode(value: unknown): string | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined
  try {
    const code = (value as { readonly code?: unknown }).code
    return typeof code === 'string' ? code : undefined
  } catch {
    return undefined
  }
}

function lineageOf(target: abstract new (...args: never[]) => unknown): readonly string[] {
  let names = lineages.get(target)
  if (names === undefined) {
    const list: string[] = []
    for (let c: unknown = target; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
      if (!list.includes(c.name)) list.push(c.name)
      if (c === FlowingError) break
      for (const name of familyNames(c)) if (!list.includes(name)) list.push(name)
    }
    names = Object.freeze(list)
    lineages.set(target, names)
  }
  return names
}

// The names of the lines of the classes `c` joins (its own static [flowingErrorFamilies]), FlowingError
// left for the end of the lineage.
function familyNames(c: object): string[] {
  const families: unknown = Object.hasOwn(c, flowingErrorFamilies)
    ? (c as { readonly [flowingErrorFamilies]: unknown })[flowingErrorFamilies]
    : undefined
  if (!Array.isArray(families)) return []
  return families
    .filter((f): f is FlowingErrorClass => typeof f === 'function' && f !== FlowingError)
    .flatMap((f) => lineageOf(f).filter((name) => name !== 'FlowingError'))
}

// Whether `value`'s brand names the class `name`; false for anything unbranded or hostile.
function brandNames(value: unknown, name: string): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false
  try {
    const lineage = (value as { readonly [flowingErrorBrand]?: unknown })[flowingErrorBrand]
    return Array.isArray(lineage) && lineage.includes(name)
  } catch {
    return false
  }
}
