/**
 * The thread's side (piscina's task function): loads the handler module once per thread, calls its
 * export with the payload and a context, and answers with the outcome as plain data. Commit points
 * and follow-up posts go back over the thread's notes channel before the answer, in order.
 *
 * @module
 */
import { MessageChannel, parentPort, workerData } from 'node:worker_threads'
import { exportOf } from './exports.js'
import { readPreload } from './preload.js'
import type { Note, NotesPortMessage, Outcome, Task, TaskContext, ThreadContext } from './wire.js'
import { NOTES_PORT, toWire } from './wire.js'

const modules = new Map<string, Promise<Record<string, unknown>>>()

// The modules the pool's tasks used so far are loaded before the thread reports ready (piscina parks
// an idle thread in Atomics.wait, where nothing loads); a task meets a failed import's error itself.
const preloads = readPreload((workerData as { preload?: unknown } | null)?.preload)
for (const href of preloads) modules.set(href, import(href) as Promise<Record<string, unknown>>)
await Promise.allSettled(modules.values())

// This thread's channel for its tasks' notes, handed to the pool as the thread starts — before piscina
// reports the thread ready, so before any task of it runs (both go over the parent port, in order).
const notes = new MessageChannel()
notes.port1.unref()
parentPort?.postMessage({ [NOTES_PORT]: notes.port2 } satisfies NotesPortMessage, [notes.port2])

/** Runs one task (piscina calls it on a pool thread). */
export default async function run(task: Task): Promise<Outcome> {
  try {
    const fn = await handlerOf(task)
    const value = await fn(task.payload, contextOf(task))
    return { ok: true, value: crossable(value) }
  } catch (error) {
    return { ok: false, error: toWire(error) }
  }
}

// The result if it can go back to the loop (structured clone); else a typed, non-retryable error.
function crossable(value: unknown): unknown {
  if (typeof value !== 'object' && typeof value !== 'function' && typeof value !== 'symbol') return value
  if (value === null) return value
  try {
    structuredClone(value)
    return value
  } catch (error) {
    const refused = new Error(
      `its result cannot be sent back to the loop (structured clone): ${(error as Error).message}`,
    )
    throw Object.assign(refused, { code: 'ERR_FLOWING_UNCLONEABLE_PAYLOAD', retryable: false })
  }
}

async function handlerOf(task: Task): Promise<(payload: unknown, ctx: ThreadContext) => unknown> {
  let loading = modules.get(task.module)
  if (loading === undefined) {
    loading = import(task.module) as Promise<Record<string, unknown>>
    modules.set(task.module, loading)
  }
  const found = exportOf(await loading, task.name)
  if ('problem' in found) {
    throw Object.assign(new Error(found.problem), { code: 'ERR_FLOWING_THREAD_MODULE', retryable: false })
  }
  return found.fn as (payload: unknown, ctx: ThreadContext) => unknown
}

function contextOf(task: Task): ThreadContext {
  const context: TaskContext = task.context
  const send = (note: Note) => notes.port1.postMessage(note)
  let committed = context.committed
  return {
    ...context,
    get committed() {
      return committed
    },
    commit(checkpoint: unknown = true) {
      committed = checkpoint
      send({ task: task.id, kind: 'commit', checkpoint })
    },
    post(type, payload, options) {
      send({ task: task.id, kind: 'post', type, payload, options })
    },
  }
}
