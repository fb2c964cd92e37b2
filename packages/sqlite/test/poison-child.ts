/**
 * A child process for the poison-message test: a loop on the SQLite journal at `path` whose `job`
 * handler kills its own process (SIGKILL, no cleanup of any kind) for payloads named `poison…`, and
 * logs every start, effect and dead letter with synchronous writes. Mode `seed` posts the messages,
 * waits for them to be committed and exits without running them (`autoStart`-free: it never starts
 * the pool); mode `run` recovers and runs until the queue is empty, then stops and exits 0.
 */
import { appendFileSync } from 'node:fs'
import { createLoop } from '@flowing/core'
import { sqliteStore } from '../src/index.js'

const [path, log, mode, maxCrashes] = process.argv.slice(2) as [string, string, 'seed' | 'run', string]
interface Messages {
  job: { n: string }
}
const write = (line: string) => appendFileSync(log, `${line}\n`)
const loop = createLoop<Messages>({
  store: sqliteStore({ path }),
  workers: 2,
  logger: false,
  maxCrashes: Number(maxCrashes),
})
loop.on('job', async (m) => {
  write(`start ${m.payload.n} ${process.pid}`)
  if (m.payload.n.startsWith('poison')) process.kill(process.pid, 'SIGKILL') // at once: nothing after runs
  await new Promise((r) => setTimeout(r, 2))
  write(`effect ${m.payload.n}`)
})
loop.events.on('dead-lettered', (m, letter) => write(`dead ${(m.payload as { n: string }).n} ${letter.error.name}`))

if (mode === 'seed') {
  loop.start()
  loop.pause() // posts are journaled; nothing runs in this process
  for (const [n, key] of [
    ['a1', 'a'],
    ['poison', 'a'],
    ['a2', 'a'],
    ['a3', 'a'],
    ['b1', 'b'],
    ['b2', 'b'],
  ] as const)
    loop.post('job', { n }, { key })
  await loop.flushed()
  process.exit(0) // leaves the rows as a crash would: no stop()
} else {
  loop.start()
  await loop.drain()
  await loop.stop()
  write(`finished ${process.pid}`)
}
