/**
 * The check at registration that a handler module loads and has its export: a throw-away thread
 * imports it (ESM cannot be loaded synchronously, and a module is never loaded in the loop's own
 * thread) while the registering thread waits for the answer (`Atomics.wait`, bounded). One check per
 * module, export and thread options, remembered for the process.
 *
 * @module
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import { threadFile } from './thread-file.js'

/** What the probe thread is given. */
export interface ProbeRequest {
  readonly href: string
  readonly names: readonly string[]
  readonly port: MessagePort
  /** 0 until the answer is posted, then 1. */
  readonly flag: Int32Array
}

/** What it answers: per export, what is wrong (absent when it is a function), or why the import failed. */
export type ProbeAnswer =
  | { readonly ok: true; readonly problems: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly message: string }

/** How long registration waits for a module to load before leaving the check to the first attempt. */
export const PROBE_WAIT_MS = 10_000

const answered = new Map<string, string | undefined>()

/**
 * What is wrong with `href`'s export `name` as seen from a thread started with `execArgv`, or
 * `undefined` when it is a function — or when the module took longer than {@link PROBE_WAIT_MS} to
 * load (then its first attempt tells).
 */
export function exportProblem(href: string, name: string, execArgv: readonly string[] | undefined): string | undefined {
  const key = JSON.stringify([href, name, execArgv ?? null])
  if (answered.has(key)) return answered.get(key)
  const answer = probe(href, [name], execArgv)
  const problem =
    answer === undefined ? undefined : answer.ok ? answer.problems[name] : `it could not be loaded: ${answer.message}`
  if (answer !== undefined) answered.set(key, problem)
  return problem
}

function probe(
  href: string,
  names: readonly string[],
  execArgv: readonly string[] | undefined,
): ProbeAnswer | undefined {
  const flag = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  const request: ProbeRequest = { href, names, port: port2, flag }
  const worker = new Worker(new URL(threadFile('probe-thread.js')), {
    workerData: request,
    transferList: [port2],
    ...(execArgv === undefined ? {} : { execArgv: [...execArgv] }),
    stdout: false,
    stderr: false,
  })
  try {
    Atomics.wait(flag, 0, 0, PROBE_WAIT_MS)
    return receiveMessageOnPort(port1)?.message as ProbeAnswer | undefined
  } finally {
    port1.close()
    void worker.terminate()
  }
}
