/**
 * The user's module: its documented shape, loading (`.js`/`.mjs` natively, `.ts` through tsx's ESM API)
 * and validation with messages that say what is wrong and what was expected.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Loop, LoopOptions, MessageMap, MessageType, PostOptions } from '@flowing/core'
import { ModuleLoadError, oneLine, TuneError } from './errors.js'

/**
 * What a `loopOptions` factory is told about the trial it builds a loop for.
 *
 * @group Tuning
 */
export interface TrialInfo {
  /** The worker count of the trial. */
  readonly workers: number
  /**
   * With `--threads`: the thread count of the trial. The tuner sizes `@flowing/threads`' default
   * pool to it (`threaded()` without a `pool`); a module with a pool of its own sizes it from this.
   */
  readonly threads?: number | undefined
}

/**
 * One sample message, as `sample(i)` returns it: a registered type, its payload, and the post options
 * the tuner passes on.
 *
 * @group Tuning
 */
export type SampleMessage<M extends MessageMap = Record<string, unknown>> = {
  [T in MessageType<M>]: {
    /** A message type a handler was registered for in `register()`. */
    readonly type: T
    /** The payload handed to the handler. */
    readonly payload: M[T]
    /** Partition key (messages of one key never run at once). */
    readonly key?: PostOptions['key']
    /** Priority 0 (most urgent) – 9. */
    readonly priority?: PostOptions['priority']
  }
}[MessageType<M>]

/**
 * What a tuner module exports as its default export. `M` is the module's message map, so handlers and
 * samples are type-checked against each other.
 *
 * @example
 * ```ts
 * import type { TunerModule } from '@flowing/tune'
 * interface Messages { fetch: { id: number } }
 * export default {
 *   register(loop) { loop.on('fetch', async (msg) => { await fetchSomething(msg.payload.id) }) },
 *   sample: (i) => ({ type: 'fetch', payload: { id: i }, key: i % 100 }),
 * } satisfies TunerModule<Messages>
 * ```
 *
 * @group Tuning
 */
export interface TunerModule<M extends MessageMap = Record<string, unknown>> {
  /** Registers the handlers (and middleware) on a fresh loop; called once per trial, told which. */
  register(loop: Loop<M>, trial: TrialInfo): void | Promise<void>
  /** The `i`-th sample message (i = 0, 1, 2 …). Called on the hot path: keep it cheap. */
  sample(i: number): SampleMessage<M>
  /**
   * The options of your production loop (retries, timeouts, breakers, …), or a factory called once
   * per trial: every trial loop is built with them. `workers`, `capacity`, `overflow`, `autoStart` and
   * `logger` are the tuner's (see `OWNED_LOOP_OPTIONS`); a journal `store` must come from a factory.
   */
  readonly loopOptions?: LoopOptions | ((trial: TrialInfo) => LoopOptions)
}

const SHAPE = 'export default { register(loop) { loop.on(...) }, sample(i) { return { type, payload } } }'

/**
 * Imports and validates the module at `file` (relative to the working directory).
 * @throws TuneError for a missing file, an import failure or a wrong shape
 *
 * @group Tuning
 */
export async function loadModule(file: string): Promise<TunerModule> {
  const absolute = path.resolve(file)
  if (!existsSync(absolute))
    throw new TuneError('ERR_FLOWING_TUNE_MODULE', `Module not found: ${file} (resolved to ${absolute})`)
  let namespace: Record<string, unknown>
  try {
    namespace = await importFile(absolute)
  } catch (error) {
    if (error instanceof TuneError) throw error
    throw new ModuleLoadError(file, `Could not load ${file}: ${loadFailure(error)}`, { cause: error })
  }
  return validateShape(file, namespace)
}

async function importFile(absolute: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(absolute).href
  if (!/\.[cm]?ts$/.test(absolute)) return (await import(url)) as Record<string, unknown>
  // Node 20 cannot import TypeScript: tsx's ESM API compiles it in-process, scoped to this import.
  let tsx: { tsImport(specifier: string, parent: string): Promise<unknown> }
  try {
    tsx = (await import('tsx/esm/api')) as typeof tsx
  } catch {
    throw new TuneError(
      'ERR_FLOWING_TUNE_MODULE',
      `Loading ${path.basename(absolute)} needs tsx (npm i -D tsx), or pass the compiled .js file`,
    )
  }
  return (await tsx.tsImport(url, import.meta.url)) as Record<string, unknown>
}

/**
 * Checks the default export has the {@link TunerModule} shape; exported for the smoke checks.
 *
 * @group Tuning
 */
export function validateShape(file: string, namespace: Record<string, unknown>): TunerModule {
  // tsx may wrap a CommonJS-style default once more.
  let candidate = namespace['default']
  if (isObject(candidate) && !('register' in candidate) && isObject(candidate['default'])) {
    candidate = candidate['default']
  }
  if (!isObject(candidate)) {
    throw new TuneError('ERR_FLOWING_TUNE_MODULE', `${file} has no default export object; expected ${SHAPE}`)
  }
  for (const name of ['register', 'sample'] as const) {
    const value = candidate[name]
    if (typeof value !== 'function') {
      throw new TuneError(
        'ERR_FLOWING_TUNE_MODULE',
        `${file}: expected the default export's \`${name}\` to be a function, got ${describe(value)}; expected ${SHAPE}`,
      )
    }
  }
  const options = candidate['loopOptions']
  if (options !== undefined && typeof options !== 'function' && (typeof options !== 'object' || options === null)) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_MODULE',
      `${file}: expected the default export's \`loopOptions\` to be createLoop() options or a function returning them, got ${describe(options)}`,
    )
  }
  return candidate as unknown as TunerModule
}

/**
 * Calls `sample(i)` and checks the result, so a malformed sample fails with its index instead of deep
 * inside the loop.
 *
 * @group Tuning
 */
export function checkedSample(mod: TunerModule, i: number): SampleMessage {
  let message: unknown
  try {
    message = mod.sample(i)
  } catch (error) {
    throw new TuneError('ERR_FLOWING_TUNE_SAMPLE', `sample(${i}) threw: ${oneLine(error)}`, { cause: error })
  }
  if (!isObject(message) || typeof message['type'] !== 'string' || !('payload' in message)) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_SAMPLE',
      `sample(${i}) must return { type: string, payload, key?, priority? }, got ${describe(message)}`,
    )
  }
  return message as unknown as SampleMessage
}

/** esbuild (through tsx) reports syntax errors as a list with locations; the first one says it best. */
function loadFailure(error: unknown): string {
  const first = isObject(error) && Array.isArray(error['errors']) ? (error['errors'][0] as unknown) : undefined
  if (isObject(first) && typeof first['text'] === 'string') {
    const at = isObject(first['location']) ? first['location'] : {}
    return `${String(at['line'] ?? '?')}:${String(at['column'] ?? '?')}: ${first['text']}`
  }
  return oneLine(error)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

function describe(value: unknown): string {
  if (value === null) return '`null`'
  if (typeof value === 'object') return `an object with keys [${Object.keys(value).join(', ')}]`
  return `\`${String(value)}\` (${typeof value})`
}
