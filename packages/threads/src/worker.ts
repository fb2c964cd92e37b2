/**
 * The thread's side (piscina's task function): loads the handler module once per thread, calls its
 * export with the payload and a context, and answers with the outcome as plain data. Commit points
 * and follow-up posts go back over the task's channel before the answer, in order.
 *
 * @module
 */
import type { MessagePort } from 'node:worker_threads'
import { exportOf } from './exports.js'
import type { Note, Outcome, Task, TaskContext, ThreadContext } from './wire.js'
import { toWire } from './wire.js'

const modules = new Map<string, Promise<Record<string, unknown>>>()

/** Runs one task (piscina calls it on a pool thread). */
export default async function run(task: Task): Promise<Outcome> {
  const { port } = task
  try {
    const fn = await handlerOf(task)
    const value = await fn(task.payload, contextOf(task.context, port))
    return { ok: true, value: crossable(value) }
  } catch (error) {
    return { ok: false, error: toWire(error) }
  } finally {
    port.close()
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

function contextOf(context: TaskContext, port: MessagePort): ThreadContext {
  const send = (note: Note) => port.postMessage(note)
  let committed = context.committed
  return {
    ...context,
    get committed() {
      return committed
    },
    commit(checkpoint: unknown = true) {
      committed = checkpoint
      send({ kind: 'commit', checkpoint })
    },
    post(type, payload, options) {
      send({ kind: 'post', type, payload, options })
    },
  }
}
