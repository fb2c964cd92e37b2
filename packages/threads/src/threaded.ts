/**
 * `threaded(module)`: a handler that runs its message on a worker thread. In the loop it is an
 * ordinary handler — its attempt holds a worker slot, its key, its deadline — so every guarantee of
 * the loop holds across the hop: per-key order, retries (errors come back as their classes), dead
 * letters, breakers, rate limits, requests, cancel and stop.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Transferable } from 'node:worker_threads'
import {
  type Handler,
  type HandlerContext,
  InvalidArgumentError,
  type Message,
  type MessageMap,
  type MessageType,
  NonRetryableError,
  RateLimitError,
  RetryableError,
} from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import { ThreadCrashedError, ThreadModuleError, UncloneablePayloadError } from './errors.js'
import { defaultPool, ThreadPool } from './pool.js'
import { exportProblem } from './probe.js'
import type { Note, Task, WireError } from './wire.js'

const check = argumentChecks(InvalidArgumentError)
const KEYS = ['export', 'pool', 'transfer'] as const

/** How a threaded handler runs. */
export interface ThreadedOptions<P = unknown> {
  /**
   * The module's export to call.
   * @defaultValue `'default'` (a CommonJS module's `module.exports`)
   */
  readonly export?: string
  /** The pool to run on (default: one shared pool). */
  readonly pool?: ThreadPool
  /** What of the payload to transfer instead of copy (`ArrayBuffer`s, `MessagePort`s). */
  readonly transfer?: (payload: P) => readonly Transferable[]
}

/**
 * A handler that runs `module`'s export on a worker thread: `export default (payload, ctx) => result`.
 * A payload that cannot cross to a thread is refused when it is posted (`UncloneablePayloadError`).
 * The result is what `loop.request()` resolves with; a throw fails the attempt as in the loop, its
 * class kept (`RetryableError`, `RateLimitError`, `NonRetryableError`, or an error with the same name,
 * message, stack, `cause` and fields). The attempt's deadline and a cancel or a stop without drain
 * terminate the thread (the CPU is freed) and the pool replaces it.
 *
 * @param module - the handler module: a `file:` URL (`new URL('./resize.js', import.meta.url)`) or an absolute path; ESM or CommonJS
 * @param options - the export, the pool, what to transfer
 * @throws ThreadModuleError when the file does not exist, cannot be loaded (checked on a throw-away
 * thread, once per module and export), lacks the export or the export is not a function;
 * InvalidArgumentError for bad options
 * @group Threads
 */
export function threaded<
  M extends MessageMap = MessageMap,
  T extends MessageType<M> = MessageType<M>,
  Result = unknown,
>(module: URL | string, options?: ThreadedOptions<M[T]>): Handler<M, T, Result> {
  const href = moduleHref(module)
  const o = check.snapshot('options', options ?? {})
  check.knownKeys('options', o, KEYS)
  const name = o['export'] === undefined ? 'default' : checkName(o['export'])
  const pool = o['pool'] === undefined ? undefined : checkPool(o['pool'])
  const transfer =
    o['transfer'] === undefined
      ? undefined
      : check.fn<(payload: M[T]) => readonly Transferable[]>('options.transfer', o['transfer'])
  const problem = exportProblem(href, name, pool === undefined ? undefined : pool.execArgv)
  if (problem !== undefined) throw new ThreadModuleError(href, problem)
  const handler: Handler<M, T, Result> = (message, ctx) =>
    runOnThread<M, T, Result>({ href, name, pool: pool ?? defaultPool(), transfer }, message, ctx)
  // Read by the loop at registration: a payload that cannot cross is refused at post, not on the thread.
  return Object.assign(handler, { checkPayload: checkCrossable })
}

// Refuses a payload with a value structured clone cannot copy (a function, a symbol, a promise, a weak
// collection), naming where: a walk of at most CHECKED_NODES values, no copy — a larger payload's
// deeper values are checked when it crosses (the attempt then fails the same way, not retried).
function checkCrossable(payload: unknown): void {
  const path = uncloneableIn(payload)
  if (path !== undefined) throw new UncloneablePayloadError(path)
}

const CHECKED_NODES = 2_000

/** The path of the first value of `root` structured clone refuses, within the walk's budget. */
function uncloneableIn(root: unknown): string | undefined {
  const stack: [unknown, string][] = [[root, 'payload']]
  const seen = new Set<object>()
  for (let budget = CHECKED_NODES; stack.length > 0 && budget > 0; budget--) {
    const [value, path] = stack.pop() as [unknown, string]
    if (typeof value === 'function' || typeof value === 'symbol') return path
    if (typeof value !== 'object' || value === null || seen.has(value)) continue
    seen.add(value)
    if (value instanceof Promise || value instanceof WeakMap || value instanceof WeakSet) return path
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) continue
    const entries = value instanceof Map ? [...value.entries()].flat() : value instanceof Set ? [...value] : undefined
    if (entries !== undefined) {
      for (const [i, v] of entries.entries()) stack.push([v, `${path}[${i}]`])
    } else {
      for (const key of Object.keys(value)) stack.push([(value as Record<string, unknown>)[key], `${path}.${key}`])
    }
  }
  return undefined
}

interface Target<P> {
  readonly href: string
  readonly name: string
  readonly pool: ThreadPool
  readonly transfer: ((payload: P) => readonly Transferable[]) | undefined
}

async function runOnThread<M extends MessageMap, T extends MessageType<M>, Result>(
  target: Target<M[T]>,
  message: Message<M, T>,
  ctx: HandlerContext<M>,
): Promise<Result> {
  const notes = new Notes(ctx)
  const signal = ctx.signal as AbortSignal
  const transferList = target.transfer?.(message.payload) ?? [] // its own error fails the attempt
  let outcome: Awaited<ReturnType<ThreadPool['run']>>
  try {
    outcome = await target.pool.run(taskOf(target, message, ctx), transferList, signal, notes.apply)
  } catch (error) {
    if (signal.aborted) throw signal.reason // the deadline, a cancel or a stop ended it
    if (isCloneError(error))
      throw new UncloneablePayloadError(`the payload of ${message.type} ${message.id}`, { cause: error })
    throw new ThreadCrashedError(target.href, { cause: error })
  }
  notes.rethrow()
  if (outcome.ok) return outcome.value as Result
  throw fromWire(outcome.error, target.href)
}

function taskOf<M extends MessageMap, T extends MessageType<M>>(
  target: Target<M[T]>,
  message: Message<M, T>,
  ctx: HandlerContext<M>,
): Omit<Task, 'id'> {
  const context = {
    id: message.id,
    type: message.type,
    key: message.key as string | number | undefined,
    headers: { ...message.headers },
    attempt: ctx.attempt,
    committed: ctx.committed,
  }
  return { module: target.href, name: target.name, payload: message.payload, context }
}

// The commit points and follow-ups a running handler sends, applied in order as they arrive.
class Notes<M extends MessageMap> {
  readonly #ctx: HandlerContext<M>
  #failed: { error: unknown } | undefined

  constructor(ctx: HandlerContext<M>) {
    this.#ctx = ctx
  }

  // A follow-up the loop refused (full, stopped) fails the attempt, as `ctx.post` would have thrown.
  rethrow(): void {
    if (this.#failed !== undefined) throw this.#failed.error
  }

  readonly apply = (note: Note): void => {
    if (this.#failed !== undefined) return // after a refused follow-up nothing more applies, as in the loop
    try {
      if (note.kind === 'commit') this.#ctx.commit(note.checkpoint)
      else this.#ctx.post(note.type as MessageType<M>, note.payload as M[MessageType<M>], note.options)
    } catch (error) {
      this.#failed ??= { error }
    }
  }
}

/** The error a thread reported, rebuilt in the loop as its class. */
function fromWire(w: WireError, module: string): unknown {
  if (!w.isError) return w.value
  const options = w.hasCause && w.cause !== undefined ? { cause: fromWire(w.cause, module) } : undefined
  let error: Error
  try {
    error = rebuild(w, module, options)
  } catch {
    error = new Error(w.message, options) // fields a class refuses (a bad retry-after): kept as fields below
  }
  for (const [key, value] of Object.entries(w.fields)) {
    if (!(key in error)) (error as unknown as Record<string, unknown>)[key] = value
  }
  // A plain error keeps the thread's name (`QuotaError`); a rebuilt class keeps its own.
  if (error.constructor === Error && error.name !== w.name) {
    Object.defineProperty(error, 'name', { value: w.name, configurable: true, writable: true })
  }
  if (w.stack !== undefined)
    Object.defineProperty(error, 'stack', { value: w.stack, configurable: true, writable: true })
  return error
}

function rebuild(w: WireError, module: string, options: ErrorOptions | undefined): Error {
  switch (w.code) {
    case 'ERR_FLOWING_RETRYABLE':
      return new RetryableError(w.message, options)
    case 'ERR_FLOWING_NON_RETRYABLE':
      return new NonRetryableError(w.message, options)
    case 'ERR_FLOWING_RATE_LIMITED': {
      const { retryAfterMs, scope } = w.fields as { retryAfterMs?: number; scope?: 'route' | 'key' | 'group' }
      return new RateLimitError(w.message, {
        ...options,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(scope === undefined ? {} : { scope }),
      })
    }
    case 'ERR_FLOWING_THREAD_MODULE':
      return new ThreadModuleError(module, w.message, options)
    case 'ERR_FLOWING_UNCLONEABLE_PAYLOAD':
      return new UncloneablePayloadError(`the result of ${module}`, options)
    default:
      return new Error(w.message, options)
  }
}

function isCloneError(error: unknown): boolean {
  return error instanceof Error && error.name === 'DataCloneError'
}

function moduleHref(module: URL | string): string {
  let url: URL
  if (module instanceof URL) url = module
  else if (typeof module === 'string' && module.startsWith('file:')) url = new URL(module)
  else if (typeof module === 'string' && isAbsolute(module)) url = pathToFileURL(module)
  else throw new InvalidArgumentError('module', 'a file: URL or an absolute path', module)
  if (url.protocol !== 'file:') throw new InvalidArgumentError('module', 'a file: URL or an absolute path', module)
  if (!existsSync(fileURLToPath(url))) throw new ThreadModuleError(url.href, 'no such file')
  return url.href
}

function checkName(value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw new InvalidArgumentError('options.export', 'an export name', value)
  return value
}

function checkPool(value: unknown): ThreadPool {
  if (!(value instanceof ThreadPool)) throw new InvalidArgumentError('options.pool', 'a ThreadPool', value)
  return value
}
