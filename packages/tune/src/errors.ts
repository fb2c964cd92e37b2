/**
 * The tuner's one error type: every failure a user can cause (bad flags, a missing module, a module of
 * the wrong shape, handlers that always fail, a target nothing meets) becomes one line and an exit code,
 * never a stack dump.
 *
 * @module
 */

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
 * A user-facing failure: `message` is printed as one line after `✗ flowing-tune:`.
 *
 * @group Errors
 */
export class TuneError extends Error {
  override readonly name: string = 'TuneError'
  /** The process exit code this failure maps to. */
  readonly exitCode: number

  constructor(message: string, exitCode: number = ExitCode.failed, options?: ErrorOptions) {
    super(message, options)
    this.exitCode = exitCode
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
  override readonly name: string = 'InvalidLoopOptionsError'
  /** The option at fault, as a path from the export: `loopOptions.retry.maxAttempts`, `loopOptions()`. */
  readonly option: string

  /**
   * @param option - the option's path, `loopOptions.…`
   * @param message - what is wrong and what to do
   * @param options - `cause`: what `createLoop()` or the factory threw
   */
  constructor(option: string, message: string, options?: ErrorOptions) {
    super(message, ExitCode.failed, options)
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
  override readonly name: string = 'ModuleLoadError'
  /** The module as given. */
  readonly file: string

  /**
   * @param file - the module as given on the command line
   * @param message - the one-line summary
   * @param options - `cause`: what the import threw
   */
  constructor(file: string, message: string, options?: ErrorOptions) {
    super(message, ExitCode.failed, options)
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
