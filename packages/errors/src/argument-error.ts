/**
 * The one argument error of every Flowing package: which argument, which rule, which value, in one
 * fixed message shape.
 *
 * @module
 */
import { describeValue } from './describe-value.js'
import { FlowingError } from './flowing-error.js'

/**
 * Options of an {@link ArgumentError}: the standard `cause`, and a hint appended to the message.
 *
 * @group Arguments
 */
export interface ArgumentErrorOptions extends ErrorOptions {
  /** A sentence appended after `; `, e.g. ``did you mean `capacity`?`` (none when `undefined`). */
  readonly hint?: string | undefined
}

/**
 * An argument or option broke its rule: the base of every package's argument error
 * (`InvalidArgumentError` of `@flowing/core`, `WheelArgumentError`, `BackpressureArgumentError`,
 * `WatchdogArgumentError`), which differ only by their `code`.
 *
 * @remarks
 * **One message shape.** ``Expected `<argument>` to be <rule>, got <value> (<kind>)`` and, with a hint,
 * `; <hint>` — the value quoted by {@link describeValue}, so building the message never throws and never
 * runs the value's code, whatever the value (a throwing `Proxy`, a symbol, a cyclic object).
 *
 * **Fields, not parsing.** {@link ArgumentError.argument}, {@link ArgumentError.rule},
 * {@link ArgumentError.value} and {@link ArgumentError.hint} carry the parts of the message: a caller
 * that re-words an error (names an option after its own option) rebuilds it from them.
 *
 * **Thrown before anything changed.** Every Flowing check throws it synchronously, before a counter
 * moves or an option applies.
 *
 * **One class per package, differing only by code.** A subclass sets its static
 * {@link ArgumentError.code} (and narrows the instance's `code` type); the constructor is inherited.
 *
 * @example
 * ```ts
 * import { ArgumentError } from '@flowing/errors'
 *
 * class QuotaArgumentError extends ArgumentError {
 *   static override readonly code = 'ERR_APP_INVALID_ARGUMENT'
 *   declare readonly code: 'ERR_APP_INVALID_ARGUMENT'
 * }
 * const error = new QuotaArgumentError('options.limit', 'a positive integer', 0)
 * console.log(error.message) // Expected `options.limit` to be a positive integer, got `0` (number)
 * console.log(error.code, error instanceof ArgumentError, error.rule) // ERR_APP_INVALID_ARGUMENT true a positive integer
 * ```
 *
 * @group Arguments
 */
export class ArgumentError extends FlowingError {
  /** The `code` of this class's errors: each subclass sets its own. */
  static readonly code: string = 'ERR_INVALID_ARGUMENT'

  /** The argument or option, as a path from the call: `capacity`, `options.retry.maxAttempts`. */
  readonly argument: string
  /** What it must be, e.g. `a positive integer`: the words after "to be" in the message. */
  readonly rule: string
  /** The rejected value, as given. */
  readonly value: unknown
  /** The sentence after the rule, e.g. ``did you mean `capacity`?``, if any. */
  declare readonly hint?: string

  /**
   * @param argument - the argument or option name
   * @param rule - what it must be, e.g. "a positive integer"
   * @param value - the value received
   * @param options - `cause` (e.g. what a throwing getter threw) and `hint`
   */
  constructor(argument: string, rule: string, value: unknown, options?: ArgumentErrorOptions) {
    const hint = options?.hint
    super(
      new.target.code,
      `Expected \`${argument}\` to be ${rule}, got ${describeValue(value)}${hint === undefined ? '' : `; ${hint}`}`,
      options !== undefined && 'cause' in options ? { cause: options.cause } : undefined,
    )
    this.argument = argument
    this.rule = rule
    this.value = value
    if (hint !== undefined) this.hint = hint
  }
}

/**
 * A package's argument error class: `new (argument, rule, value, options?)`, its `code` fixed by the
 * class — {@link ArgumentError} or a subclass. What {@link argumentChecks} throws.
 *
 * @group Arguments
 */
export type ArgumentErrorClass = new (
  argument: string,
  rule: string,
  value: unknown,
  options?: ArgumentErrorOptions,
) => ArgumentError
