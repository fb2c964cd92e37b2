/**
 * The argument kit: every check a Flowing package runs on what its caller passed, bound to the
 * package's own {@link ArgumentError} subclass.
 *
 * @module
 */
import type { ArgumentErrorClass } from './argument-error.js'
import { closestName } from './closest-name.js'
import { type IntegerRange, integerRule, isIntegerIn, isNumberIn, type NumberRange, numberRule } from './ranges.js'
import { isObject, keysOf, read, snapshot, typed } from './readable-options.js'

/**
 * How an unknown option is refused: the rule it breaks and the hint after it, given the known names
 * and the one nearest to the unknown name (within two edits), if any.
 *
 * @group Arguments
 */
export type UnknownKeyWording = (
  known: readonly string[],
  near: string | undefined,
) => { readonly rule: string; readonly hint?: string | undefined }

const didYouMean = (near: string | undefined): string | undefined =>
  near === undefined ? undefined : `did you mean \`${near}\`?`

/**
 * The wording of an unknown option throughout Flowing: ``one of the known options (a, b, c)``, and
 * ``did you mean `b`?`` for a near miss.
 *
 * @group Arguments
 */
export const knownOptionsWording: UnknownKeyWording = (known, near) => ({
  rule: `one of the known options (${known.join(', ')})`,
  hint: didYouMean(near),
})

/**
 * The checks of {@link argumentChecks}. Each returns the value it accepted (narrowed) or throws the
 * bound error class, naming the argument, the rule and the value; none throws anything else, whatever
 * the value, and none runs user code except where it reads options (`snapshot`, `knownKeys`), where a
 * throwing getter or `Proxy` trap becomes an argument error with the rule "a readable option".
 *
 * @group Arguments
 */
export interface ArgumentChecks {
  /** A safe integer within `range`: ``an integer from 1 to 64``. */
  integer(argument: string, value: unknown, range?: IntegerRange): number
  /** A number within `range`, never `NaN`, finite unless `finite: false`: ``a finite number > 0``. */
  number(argument: string, value: unknown, range?: NumberRange): number
  /** An object — not `null`, an array or a function — with the rule `an object` (or `rule`). */
  plainObject(argument: string, value: unknown, rule?: string): Record<string, unknown>
  /** `undefined`, or else an object as for `plainObject`, with the rule `an options object` (or `rule`). */
  optionsObject(argument: string, value: unknown, rule?: string): Record<string, unknown> | undefined
  /**
   * No own enumerable key outside `known`: the first unknown one is refused as `argument.key`, its value
   * quoted, with the nearest known name as a hint (a typo such as `capasity` must not pass unnoticed).
   */
  knownKeys(argument: string, options: object, known: readonly string[]): void
  /** A function. */
  fn<F extends (...args: never[]) => unknown = (...args: never[]) => unknown>(argument: string, value: unknown): F
  /** `true` or `false`. */
  boolean(argument: string, value: unknown): boolean
  /**
   * One of the strings `allowed`: ``one of 'a', 'b'`` (or `rule`); with `suggest`, a near miss gets
   * ``did you mean `b`?``.
   */
  oneOf<T extends string>(
    argument: string,
    value: unknown,
    allowed: readonly T[],
    wording?: { readonly rule?: string | undefined; readonly suggest?: boolean | undefined },
  ): T
  /**
   * A plain copy of the options object `value`, each own enumerable property read once: what follows
   * checks the copy, so a getter runs here and nowhere else (an answer cannot change between the check
   * and the use).
   */
  snapshot(argument: string, value: unknown): Record<string, unknown>
  /**
   * Runs `validate`; anything it throws that is not a Flowing error — a throwing getter, a `Proxy`
   * trap — becomes an argument error naming the path under `value` whose read throws, or `argument`.
   */
  readably<T>(argument: string, validate: () => T, value?: unknown): T
  /** `thrown` if it is a Flowing error, else the argument error of `readably` that it caused. */
  typed(argument: string, thrown: unknown, value?: unknown): Error
}

/**
 * The argument kit bound to a package's error class: every check throws `error`, so the package's
 * users catch its own class and `code`.
 *
 * @param error - the package's {@link ArgumentError} subclass (`new (argument, rule, value, options?)`)
 * @param wording - how an unknown option is refused (default {@link knownOptionsWording})
 *
 * @example
 * ```ts
 * import { ArgumentError, argumentChecks } from '@flowing/errors'
 *
 * class PoolArgumentError extends ArgumentError {
 *   static override readonly code = 'ERR_POOL_INVALID_ARGUMENT'
 * }
 * const check = argumentChecks(PoolArgumentError)
 *
 * const options = check.snapshot('options', { size: 4, idleMS: 100 })
 * try {
 *   check.knownKeys('options', options, ['size', 'idleMs'])
 * } catch (error) {
 *   // Expected `options.idleMS` to be one of the known options (size, idleMs), got `100` (number); did you mean `idleMs`?
 *   console.log((error as PoolArgumentError).message)
 * }
 * console.log(check.integer('options.size', options['size'], { min: 1, max: 64 })) // 4
 * ```
 *
 * @group Arguments
 */
export function argumentChecks(
  error: ArgumentErrorClass,
  wording: UnknownKeyWording = knownOptionsWording,
): ArgumentChecks {
  return {
    integer(argument, value, range = ANY) {
      if (!isIntegerIn(value, range)) throw new error(argument, integerRule(range), value)
      return value
    },
    number(argument, value, range = ANY) {
      if (!isNumberIn(value, range)) throw new error(argument, numberRule(range), value)
      return value
    },
    plainObject(argument, value, rule = 'an object') {
      if (!isObject(value)) throw new error(argument, rule, value)
      return value
    },
    optionsObject(argument, value, rule = 'an options object') {
      if (value !== undefined && !isObject(value)) throw new error(argument, rule, value)
      return value
    },
    knownKeys(argument, options, known) {
      for (const key of keysOf(error, argument, options)) {
        if (known.includes(key)) continue
        const { rule, hint } = wording(known, closestName(key, known))
        throw new error(`${argument}.${key}`, rule, read(error, argument, options, key), { hint })
      }
    },
    fn<F>(argument: string, value: unknown): F {
      if (typeof value !== 'function') throw new error(argument, 'a function', value)
      return value as F
    },
    boolean(argument, value) {
      if (typeof value !== 'boolean') throw new error(argument, 'a boolean', value)
      return value
    },
    oneOf<T extends string>(argument: string, value: unknown, allowed: readonly T[], words?: OneOfWording): T {
      if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T
      const near = words?.suggest && typeof value === 'string' ? closestName(value, allowed) : undefined
      const rule = words?.rule ?? `one of ${allowed.map((a) => `'${a}'`).join(', ')}`
      throw new error(argument, rule, value, { hint: didYouMean(near) })
    },
    snapshot: (argument, value) => snapshot(error, argument, value),
    readably(argument, validate, value) {
      try {
        return validate()
      } catch (thrown) {
        throw typed(error, argument, thrown, value)
      }
    },
    typed: (argument, thrown, value) => typed(error, argument, thrown, value),
  }
}

// The range of a check given none (one object, not one per call).
const ANY = Object.freeze({})

type OneOfWording = { readonly rule?: string | undefined; readonly suggest?: boolean | undefined }
