/**
 * The errors of `@flowing/threads`, each a `FlowingError` with a stable `code`.
 *
 * @module
 */
import { FlowingError } from '@flowing/errors'

/**
 * The thread running an attempt died under it — `process.exit()` in the module, an uncaught
 * exception outside the task, the thread's `resourceLimits` exceeded — or could not start. Only that
 * attempt fails (as an ordinary error: retried under the type's policy); the pool replaces the thread.
 * @group Errors
 */
export class ThreadCrashedError extends FlowingError {
  declare readonly code: 'ERR_FLOWING_THREAD_CRASHED'
  /** The handler module the thread was running. */
  readonly module: string

  /**
   * @param module - the handler module's URL
   * @param options - `cause`: what the pool reported
   */
  constructor(module: string, options?: ErrorOptions) {
    const why = options?.cause instanceof Error ? options.cause.message : String(options?.cause)
    super('ERR_FLOWING_THREAD_CRASHED', `the thread running ${module} died: ${why}`, options)
    this.module = module
  }
}

/**
 * A threaded handler's module cannot be used: the file does not exist, it fails to load, it has no
 * such export, or the export is not a function. Thrown at registration (the module is loaded once on
 * a throw-away thread, never in the loop's); should the module change or load differently on the
 * pool's threads, the attempt fails with it and is not retried.
 * @group Errors
 */
export class ThreadModuleError extends FlowingError {
  declare readonly code: 'ERR_FLOWING_THREAD_MODULE'
  /** The handler module's URL. */
  readonly module: string
  /** Never retried: the same module fails the same way. */
  readonly retryable = false

  /**
   * @param module - the handler module's URL
   * @param message - what is wrong with it
   * @param options - `cause`
   */
  constructor(module: string, message: string, options?: ErrorOptions) {
    super('ERR_FLOWING_THREAD_MODULE', `${module}: ${message}`, options)
    this.module = module
  }
}

/**
 * A message's payload cannot cross to a thread, or its handler's result cannot come back: structured
 * clone refuses it (a function, a symbol, a class instance whose methods would be lost). Not retried:
 * the same message would fail again.
 * @group Errors
 */
export class UncloneablePayloadError extends FlowingError {
  declare readonly code: 'ERR_FLOWING_UNCLONEABLE_PAYLOAD'
  /** Never retried: the same payload fails the same way. */
  readonly retryable = false

  /**
   * @param what - where it was found, e.g. `payload.callback`
   * @param options - `cause`: the clone's error
   */
  constructor(what: string, options?: ErrorOptions) {
    super(
      'ERR_FLOWING_UNCLONEABLE_PAYLOAD',
      `${what} cannot cross between the loop and a worker thread (structured clone)`,
      options,
    )
  }
}
