/**
 * The tuner's one error type: every failure a user can cause (bad flags, a missing module, a module of
 * the wrong shape, handlers that always fail, a target nothing meets) becomes one line and an exit code,
 * never a stack dump.
 *
 * @module
 */

/** Exit codes of `flowing-tune`. */
export const ExitCode = {
  /** A recommendation was made. */
  ok: 0,
  /** The sweep ran but could not recommend (target not met, handlers failing, module broken). */
  failed: 1,
  /** Bad command line. */
  usage: 2,
} as const

/** A user-facing failure: `message` is printed as one line after `✗ flowing-tune:`. */
export class TuneError extends Error {
  override readonly name = 'TuneError'
  /** The process exit code this failure maps to. */
  readonly exitCode: number

  constructor(message: string, exitCode: number = ExitCode.failed, options?: ErrorOptions) {
    super(message, options)
    this.exitCode = exitCode
  }
}

/** The message of any thrown value, on one line (first line only: stacks stay out of the output). */
export function oneLine(error: unknown): string {
  const text =
    error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error)
  return text.split('\n')[0] ?? text
}
