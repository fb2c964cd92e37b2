/**
 * The tuner's one error type: every failure a user can cause (bad flags, a missing module, a module of
 * the wrong shape, handlers that always fail, a target nothing meets) becomes one line and an exit code,
 * never a stack dump.
 *
 * @module
 */
import { FlowingError } from '@flowing/errors'

/**
 * Exit codes of `flowing-tune`.
 *
 * @group Errors
 */
export const ExitCode = {
  /** A recommendation was made. */
  ok: 0,
  /** The sweep ran but could not recommend (target not met, handlers failing, module broken). */
  failed: 1,
  /** Bad command line. */
  usage: 2,
} as const

/**
 * The stable codes of `@flowing/tune`'s errors, one per kind of failure.
 *
 * - `ERR_FLOWING_TUNE_USAGE` — a bad command line or `tune()` options: a flag's value out of range,
 *   an unknown flag, no module (exit code 2).
 * - `ERR_FLOWING_TUNE_MODULE` — the module is missing, needs tsx, or its default export has the wrong
 *   shape.
 * - `ERR_FLOWING_TUNE_MODULE_LOAD` — importing the module threw ({@link ModuleLoadError}).
 * - `ERR_FLOWING_TUNE_LOOP_OPTIONS` — the module's `loopOptions` cannot build a loop
 *   ({@link InvalidLoopOptionsError}).
 * - `ERR_FLOWING_TUNE_SAMPLE` — `sample(i)` threw, returned no message, or its message was refused.
 * - `ERR_FLOWING_TUNE_HANDLERS` — the handlers cannot be measured: `register(loop)` threw, every
 *   message failed, none finished, a handler never settles or left a rejection unhandled.
 * - `ERR_FLOWING_TUNE_NO_RECOMMENDATION` — the sweep ran, and no worker count meets the target.
 *
 * @group Errors
 */
export type TuneErrorCode =
  | 'ERR_FLOWING_TUNE_USAGE'
  | 'ERR_FLOWING_TUNE_MODULE'
  | 'ERR_FLOWING_TUNE_MODULE_LOAD'
  | 'ERR_FLOWING_TUNE_LOOP_OPTIONS'
  | 'ERR_FLOWING_TUNE_SAMPLE'
  | 'ERR_FLOWING_TUNE_HANDLERS'
  | 'ERR_FLOWING_TUNE_NO_RECOMMENDATION'

/**
 * A user-facing failure: `message` is printed as one line after `✗ flowing-tune:`. A
 * {@link FlowingError} with a stable {@link TuneError.code} per kind of failure.
 *
 * @group Errors
 */
export class TuneError extends FlowingError {
  /** Stable machine-readable code: what kind of failure (see {@link TuneErrorCode}). */
  declare readonly code: TuneErrorCode
  /** The process exit code this failure maps to: {@link ExitCode}`.usage` for a bad command line, else `failed`. */
  readonly exitCode: number

  /**
   * @param code - the kind of failure
   * @param message - one line: what is wrong and what to do
   * @param options - `cause`: what was thrown underneath
   */
  constructor(code: TuneErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
    this.exitCode = code === 'ERR_FLOWING_TUNE_USAGE' ? ExitCode.usage : ExitCode.failed
  }
}

/**
 * The module's `loopOptions` cannot build a trial loop: an option the tuner owns, an option
 * `createLoop()` refuses (its `InvalidArgumentError` is the `cause`), a factory that throws or returns
 * no object. Thrown before the sweep starts, exit code 1.
 *
 * @group Errors
 */
export class InvalidLoopOptionsError extends TuneError {
  declare readonly code: 'ERR_FLOWING_TUNE_LOOP_OPTIONS'
  /** The option at fault, as a path from the export: `loopOptions.retry.maxAttempts`, `loopOptions()`. */
  readonly option: string

  /**
   * @param option - the option's path, `loopOptions.…`
   * @param message - what is wrong and what to do
   * @param options - `cause`: what `createLoop()` or the factory threw
   */
  constructor(option: string, message: string, options?: ErrorOptions) {
    super('ERR_FLOWING_TUNE_LOOP_OPTIONS', message, options)
    this.option = option
  }
}

/**
 * The user's module could not be imported (a syntax error, a throwing top level, a missing import):
 * the message is one line, `cause` is what the import threw, which the bin prints whole.
 *
 * @group Errors
 */
export class ModuleLoadError extends TuneError {
  declare readonly code: 'ERR_FLOWING_TUNE_MODULE_LOAD'
  /** The module as given. */
  readonly file: string

  /**
   * @param file - the module as given on the command line
   * @param message - the one-line summary
   * @param options - `cause`: what the import threw
   */
  constructor(file: string, message: string, options?: ErrorOptions) {
    super('ERR_FLOWING_TUNE_MODULE_LOAD', message, options)
    this.file = file
  }
}

/**
 * A thrown value in full, for a developer: every error of its `cause` chain with its stack (or, for a
 * non-error, its string form), each after `Caused by:`. Nothing is cut off.
 *
 * @group Errors
 */
export function fullCause(error: unknown): string {
  const parts: string[] = []
  const seen = new Set<unknown>()
  for (let e: unknown = error; e !== undefined && !seen.has(e); ) {
    seen.add(e)
    const text = e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e)
    parts.push(parts.length === 0 ? text : `Caused by: ${text}`)
    e = e instanceof Error ? e.cause : undefined
  }
  return parts.join('\n')
}

/**
 * The message of any thrown value, on one line (first line only: stacks stay out of the output).
 *
 * @group Errors
 */
export function oneLine(error: unknown): string {
  const text =
    error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error)
  return text.split('\n')[0] ?? text
}
