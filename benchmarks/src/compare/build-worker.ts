/**
 * One build of `@flowing/core` in a worker thread of its own: its own V8 isolate, so its own heap,
 * optimized code and hidden classes. Two builds loaded into one isolate share V8's hidden-class
 * transition trees (objects of the same literal shape get the same map whichever build made them), so
 * one build's stores can generalize a field the other's optimized code relied on; a worker each keeps
 * them apart while the main thread still runs them turn about in one process.
 *
 * The main thread sends `{ id, units }` and waits; the worker collects garbage, runs that case and
 * answers `{ seconds }` or `{ error }`. {@link startBuildWorker} is the main thread's side.
 *
 * @module
 */
import { pathToFileURL } from 'node:url'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { BenchError } from '../lib/check.js'
import { collect } from '../lib/gc.js'
import { makeWorkload } from '../lib/workload.js'
import { buildRuns, type CoreModule, type Run } from './cases.js'
import { CASES, type CaseId, KEY_COUNT } from './specs.js'

/** What the worker is started with. */
interface Start {
  /** The build's core entry, absolute. */
  readonly file: string
  /** Messages of the workload. */
  readonly n: number
}

type Answer = { readonly seconds: number } | { readonly error: string }

/** A build running in a worker: its runs, and how to end the worker. */
export interface BuildWorker {
  readonly runs: Record<CaseId, Run>
  close(): Promise<void>
}

/** Starts a worker holding the build at `file` with a workload of `n` messages. */
export function startBuildWorker(file: string, n: number): BuildWorker {
  const worker = new Worker(new URL(import.meta.url), { workerData: { file, n } satisfies Start })
  const ask = (id: CaseId, units: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const fail = (error: Error): void => {
        worker.off('message', answered)
        reject(error)
      }
      const answered = (a: Answer): void => {
        worker.off('error', fail)
        if ('error' in a) reject(new BenchError(a.error))
        else resolve(a.seconds)
      }
      worker.once('message', answered)
      worker.once('error', fail)
      worker.postMessage({ id, units })
    })
  const runs = Object.fromEntries(CASES.map((c) => [c.id, (units: number) => ask(c.id, units)]))
  return { runs: runs as Record<CaseId, Run>, close: async () => void (await worker.terminate()) }
}

async function serve(start: Start): Promise<void> {
  const core = (await import(pathToFileURL(start.file).href)) as CoreModule
  const runs = buildRuns(core, makeWorkload(start.n, KEY_COUNT, 'random'))
  parentPort?.on('message', async ({ id, units }: { id: CaseId; units: number }) => {
    let answer: Answer
    try {
      collect()
      answer = { seconds: await runs[id](units) }
    } catch (error) {
      answer = { error: error instanceof Error ? error.message : String(error) }
    }
    parentPort?.postMessage(answer)
  })
}

if (!isMainThread) await serve(workerData as Start)
