/**
 * The throw-away thread that checks a handler module at registration: it imports the module as a
 * pool thread would, tells which of the wanted exports are functions (or why the import failed), then
 * wakes the registering thread, which waits for it synchronously (see `probe.ts`).
 *
 * @module
 */
import { workerData } from 'node:worker_threads'
import { exportOf } from './exports.js'
import type { ProbeAnswer, ProbeRequest } from './probe.js'

const { href, names, port, flag } = workerData as ProbeRequest

function answer(a: ProbeAnswer): void {
  port.postMessage(a)
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
}

// A module whose top level ends the thread (`process.exit()`) still wakes the waiting thread.
process.on('exit', () => {
  if (Atomics.load(flag, 0) === 0) answer({ ok: false, message: 'loading it ended the thread (process.exit)' })
})

try {
  const mod = (await import(href)) as Record<string, unknown>
  const problems: Record<string, string> = {}
  for (const name of names) {
    const found = exportOf(mod, name)
    if ('problem' in found) problems[name] = found.problem
  }
  answer({ ok: true, problems })
} catch (error) {
  answer({ ok: false, message: error instanceof Error ? error.message : String(error) })
}
