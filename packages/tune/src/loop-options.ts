/**
 * The trial loops' options: what the user's module gives (`loopOptions`, an object or a factory)
 * merged under what the tuner owns, and checked once before the sweep so a bad option fails at once,
 * naming itself.
 *
 * @module
 */
import { createLoop, type FailureLogger, InvalidArgumentError, type LoopOptions } from '@flowing/core'
import { InvalidLoopOptionsError, oneLine } from './errors.js'
import type { TrialInfo, TunerModule } from './module.js'

export type { TrialInfo } from './module.js'

/**
 * The options the tuner sets itself on every trial loop, and why a module may not.
 *
 * @group Tuning
 */
export const OWNED_LOOP_OPTIONS: Readonly<Record<string, string>> = {
  workers: 'the tuner sweeps it (use --workers)',
  capacity: 'the tuner sets it (use --capacity)',
  overflow: "the tuner uses 'reject' so that open-loop refusals are counted",
  autoStart: 'the tuner starts each trial loop when its window opens',
  logger: "the tuner counts the trial loop's log lines in its report instead of printing them",
}

/**
 * What the tuner sets on a trial loop.
 *
 * @group Tuning
 */
export interface OwnedOptions {
  readonly workers: number
  readonly capacity: number
  /** Receives the loop's log lines (new failure signatures). */
  readonly logger: FailureLogger
}

function fromFactory(factory: (trial: TrialInfo) => LoopOptions, trial: TrialInfo): unknown {
  try {
    return factory(trial)
  } catch (error) {
    throw new InvalidLoopOptionsError(
      'loopOptions()',
      `loopOptions({ workers: ${trial.workers} }) threw: ${oneLine(error)}`,
      {
        cause: error,
      },
    )
  }
}

/**
 * What a trial tells the module's `loopOptions` factory and `register`.
 *
 * @group Tuning
 */
export function trialInfo(owned: { readonly workers: number; readonly threads?: number | undefined }): TrialInfo {
  return owned.threads === undefined ? { workers: owned.workers } : { workers: owned.workers, threads: owned.threads }
}

/**
 * The options of one trial loop: the module's (a factory is told `trial`), then the tuner's.
 * @throws InvalidLoopOptionsError for a factory that throws or returns no object, an owned option, or
 * a journal store given as an object (one store would carry messages from one trial into the next)
 *
 * @group Tuning
 */
export function trialLoopOptions(
  mod: TunerModule,
  owned: OwnedOptions,
  trial: TrialInfo = { workers: owned.workers },
): LoopOptions {
  const given = mod.loopOptions
  const user: unknown = typeof given === 'function' ? fromFactory(given, trial) : given
  if (user === undefined) return { ...owned, overflow: 'reject' }
  if (user === null || typeof user !== 'object' || Array.isArray(user)) {
    const what = typeof given === 'function' ? 'loopOptions() returned' : 'loopOptions is'
    throw new InvalidLoopOptionsError(
      'loopOptions',
      `${what} ${user === null ? 'null' : typeof user}; expected an object of createLoop() options`,
    )
  }
  const options = user as Record<string, unknown>
  for (const key of Object.keys(options)) {
    const reason = OWNED_LOOP_OPTIONS[key]
    if (reason !== undefined && options[key] !== undefined) {
      throw new InvalidLoopOptionsError(`loopOptions.${key}`, `loopOptions.${key} cannot be set: ${reason}`)
    }
  }
  if (options['store'] !== undefined && typeof given !== 'function') {
    throw new InvalidLoopOptionsError(
      'loopOptions.store',
      'loopOptions.store must come from a factory, `loopOptions: () => ({ store: sqliteStore(…) })`, so that each trial gets its own journal',
    )
  }
  return { ...(options as LoopOptions), ...owned, overflow: 'reject' }
}

/**
 * Builds (and stops) one loop with the module's options, so what `createLoop()` refuses is reported
 * before the sweep.
 * @throws InvalidLoopOptionsError naming the option (`loopOptions.retry.maxAttempts`), with
 * `createLoop()`'s error as the cause
 *
 * @group Tuning
 */
export async function checkLoopOptions(mod: TunerModule, workers: number, capacity: number): Promise<void> {
  if (mod.loopOptions === undefined) return
  const options = trialLoopOptions(mod, { workers, capacity, logger: { warn() {} } })
  let loop: ReturnType<typeof createLoop>
  try {
    loop = createLoop({ ...options, autoStart: false })
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error
    const option = error.argument.replace(/^options/, 'loopOptions')
    const named = new InvalidArgumentError(option, error.rule, error.value, { hint: error.hint })
    throw new InvalidLoopOptionsError(option, named.message, { cause: error })
  }
  await loop.stop({ drain: false })
}
