/**
 * What crosses between the loop and a thread: the task, the messages a running handler sends back
 * (commit points, follow-up posts), and a thrown error as plain data with its class named by `code`.
 *
 * @module
 */
import type { MessagePort } from 'node:worker_threads'

/** One attempt handed to a thread. */
export interface Task {
  /** The attempt's number in its pool: its notes carry it back. */
  readonly id: number
  /** The handler module's URL (`file:`). */
  readonly module: string
  /** The export to call. */
  readonly name: string
  readonly payload: unknown
  readonly context: TaskContext
}

/**
 * The key of the message a pool thread sends once, as it starts: its end of the channel its tasks'
 * notes travel on (one channel per thread, not per task).
 */
export const NOTES_PORT = '@flowing/threads.notes'

/** That first message. */
export interface NotesPortMessage {
  readonly [NOTES_PORT]: MessagePort
}

/**
 * What a threaded handler receives besides the payload: the attempt, and two ways back to the loop.
 * A cancel, the attempt's deadline or a stop without drain terminate the thread: there is no signal
 * to watch, the work simply ends.
 */
export interface ThreadContext {
  /** The message's id. */
  readonly id: string
  /** The message's type. */
  readonly type: string
  /** Its ordering key, if it has one. */
  readonly key: string | number | undefined
  /** Its headers (trace context, tenant …). */
  readonly headers: Readonly<Record<string, string>>
  /** 1 for the first attempt, 2 for the first retry. */
  readonly attempt: number
  /** The checkpoint of the message's last commit (this attempt's too, once made), or `undefined`. */
  readonly committed: unknown
  /** Marks a commit point (see `HandlerContext.commit`): recorded by the loop, in order. */
  commit(checkpoint?: unknown): void
  /** Posts a follow-up through the loop (one hop further, this message's trace). */
  post(type: string, payload: unknown, options?: Record<string, unknown>): void
}

/** The attempt as it crosses to the thread (the data of a {@link ThreadContext}). */
export type TaskContext = Omit<ThreadContext, 'commit' | 'post'>

/** What a running handler sends back over its thread's channel, in order, tagged with its task. */
export type Note = { readonly task: number } & (
  | { readonly kind: 'commit'; readonly checkpoint: unknown }
  | {
      readonly kind: 'post'
      readonly type: string
      readonly payload: unknown
      readonly options: Record<string, unknown> | undefined
    }
)

/** How an attempt ended in the thread. */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: WireError }

/** A thrown value as plain data. */
export interface WireError {
  /** False when what was thrown was not an `Error` (it travels as `value`). */
  readonly isError: boolean
  readonly value?: unknown
  readonly name: string
  readonly message: string
  readonly stack: string | undefined
  readonly code: unknown
  /** Own enumerable fields that survive structured clone (a status, a retry-after). */
  readonly fields: Record<string, unknown>
  readonly cause?: WireError
  readonly hasCause: boolean
}

const MAX_CAUSE_DEPTH = 8

/** `error` as plain data (its cause chain too, to a depth); whatever it is, this never throws. */
export function toWire(error: unknown, depth = 0): WireError {
  try {
    return errorToWire(error, depth)
  } catch (unreadable) {
    // A throwing getter, a revoked Proxy: what can be said of it.
    const message = `an error that cannot be read (${describe(unreadable)})`
    return { isError: true, name: 'Error', message, stack: undefined, code: undefined, fields: {}, hasCause: false }
  }
}

function errorToWire(error: unknown, depth: number): WireError {
  if (!(error instanceof Error)) {
    const value = cloneable(error)
    const message = describe(error)
    const base = { name: 'Error', message, stack: undefined, code: undefined, fields: {}, hasCause: false }
    return { ...base, isError: false, value: value === DROPPED ? message : value }
  }
  const fields: Record<string, unknown> = {}
  for (const key of Object.keys(error)) {
    if (key === 'cause' || key === 'stack' || key === 'message' || key === 'name' || key === 'code') continue
    const value = cloneable((error as unknown as Record<string, unknown>)[key])
    if (value !== DROPPED) fields[key] = value
  }
  const hasCause = 'cause' in error && depth < MAX_CAUSE_DEPTH
  const code = (error as { code?: unknown }).code
  return {
    isError: true,
    name: String(error.name),
    message: String(error.message),
    stack: typeof error.stack === 'string' ? error.stack : undefined,
    code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    fields,
    hasCause,
    ...(hasCause ? { cause: toWire(error.cause, depth + 1) } : {}),
  }
}

const DROPPED = Symbol('dropped')

// A thrown non-error as text, whatever it is (a throwing toString, a null prototype).
function describe(value: unknown): string {
  try {
    return String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

// `value` if structured clone keeps it, else DROPPED (a function, a symbol, …).
function cloneable(value: unknown): unknown {
  try {
    structuredClone(value)
    return value
  } catch {
    return DROPPED
  }
}
