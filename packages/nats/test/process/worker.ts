/**
 * A worker process of test/processes.test.ts: one `createNatsLoop` of the shared name, running `work`
 * messages until told to stop over IPC. Every handler step is appended to this process's log file
 * with a synchronous write (it survives a kill -9), one line each: `<epoch ms> <pid> <event> <id>`,
 * events `start`, `effect` (applied), `refused` (the effect was there already), `resume` (a rerun saw
 * `ctx.committed` and skipped the effect), `committed`, `end`.
 *
 * The effect is the one the docs recommend for exactly-once effects on an at-least-once transport:
 * written keyed by the message's idempotency key (here a file created with `wx`, like an INSERT on a
 * unique key), then `ctx.commit()` right after, so a rerun that sees `ctx.committed` does not even try.
 *
 * Probes (`payload.probe`) are messages the test steers: `freeze` sleeps before its effect on its
 * first run (the test freezes the process then) and long after it on its rerun (the thaw comes while
 * the rerun holds the partition); `kill` commits, then sleeps on its first run (the test kills the
 * process then); `stale` sleeps long after its effect on its first run only (the redelivered copy,
 * while a stale one thaws elsewhere). "First run" is decided by a marker file created with `wx`.
 *
 * IPC: sends `{ type: 'ready' }` once pulling, and `{ type: 'probe', line }` for each probe line; on
 * `{ type: 'metrics', n }` answers `{ type: 'metrics', n, metrics }`; on `{ type: 'stop', n }` stops
 * the loop, answers likewise and exits.
 */
import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createNatsLoop } from '../../src/index.js'
import { idOf, type WorkerConfig, type WorkMessages } from './work.js'

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig
const pid = process.pid
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function write(event: string, id: string, probe: boolean): void {
  const line = `${Date.now()} ${pid} ${event} ${id}`
  appendFileSync(config.log, `${line}\n`)
  if (probe) process.send?.({ type: 'probe', line })
}

// Creates `name` under the directory unless it is there: true when this call created it.
function createOnce(name: string, content: string): boolean {
  try {
    writeFileSync(join(config.dir, name), content, { flag: 'wx' })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

const loop = await createNatsLoop<WorkMessages>({
  servers: config.url,
  name: config.name,
  partitions: config.partitions,
  ackWaitMs: config.ackWaitMs,
  sessionMs: config.sessionMs,
  workers: config.workers,
  loop: { logger: false },
  onError: (error) => {
    const e = error as Error
    appendFileSync(config.log, `${Date.now()} ${pid} error ${e?.name}: ${String(e?.message).replace(/\n/g, ' ')}\n`)
  },
})

// A dead letter is no effect: say why (the test lists them when a message has no effect).
loop.events.on('dead-lettered', (m, letter) => {
  const { key, seq } = m.payload as WorkMessages['work']
  const why = `${letter.reason} ${letter.error.name}: ${letter.error.message}`.replace(/\n/g, ' ')
  appendFileSync(config.log, `${Date.now()} ${pid} error dead-lettered ${idOf(key, seq)} (${why})\n`)
})

loop.on('work', async (m, ctx) => {
  const { key, seq, probe } = m.payload
  const id = idOf(key, seq)
  const traced = key === 'pf' || key === 'pk' || key === 'ps' // the probes and the messages after them
  const first = probe === undefined || createOnce(`first-${id}`, String(pid))
  write('start', id, traced)
  if (probe === 'freeze' && first)
    await sleep(400) // the test freezes this process here
  else await sleep(seq % 3) // load: a short wait, before the effect (a kill or a freeze may land in it)
  if (ctx.committed !== undefined) write('resume', id, traced)
  else {
    write(createOnce(`effect-${id}`, `${pid} ${Date.now()}`) ? 'effect' : 'refused', id, traced)
    ctx.commit({ pid })
  }
  if (probe === 'kill' && first) {
    write('committed', id, traced)
    await sleep(60_000) // the test kills this process here
  }
  if ((probe === 'freeze' && !first) || (probe === 'stale' && first)) await sleep(4_000) // holds the partition while a stale copy thaws
  write('end', id, traced)
})

await loop.start()

type Request = { readonly type: 'metrics' | 'stop'; readonly n: number }
process.on('message', (request: Request) => {
  void (async () => {
    if (request.type === 'stop') await loop.stop({ deadlineMs: 5_000 })
    const { local: _, ...metrics } = loop.metrics()
    process.send?.({ type: 'metrics', n: request.n, metrics })
    if (request.type === 'stop') process.disconnect()
  })()
})
process.send?.({ type: 'ready' })
