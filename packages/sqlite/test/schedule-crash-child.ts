/**
 * A child process for the schedule crash test: on the SQLite journal at `path`, a schedule firing every
 * 100 ms that backfills what it missed, and keyed reminders. Mode `post` posts 20 reminders by job key
 * (due in 3 s) once; mode `cancel` cancels the even ones by key; every mode runs until killed, or
 * (`stopAt`, epoch ms) stops gracefully after that time. Each fire and reminder appends a line to the
 * log with a synchronous write (it survives a kill -9).
 */
import { appendFileSync } from 'node:fs'
import { createLoop } from '@flowing/core'
import { sqliteStore } from '../src/index.js'

const [path, log, mode, stopAt] = process.argv.slice(2) as [string, string, 'post' | 'cancel' | 'run', string]
const loop = createLoop<{ tick: null; remind: { i: number } }>({ store: sqliteStore({ path }), logger: false })
const write = (line: string) => appendFileSync(log, `${line}\n`)
loop.on('tick', (m) => {
  const at = Date.parse(m.headers['flowing-fire-at'] as string)
  write(`${Date.now() >= at ? 'fire' : 'EARLY'} ${at}`)
})
loop.on('remind', (m) => write(`remind ${m.payload.i}`))
loop.schedule('every-100', { every: 100, missed: { backfill: 10_000 } }, 'tick', null)
loop.start()
if (mode === 'post') {
  for (let i = 0; i < 20; i++) loop.postDelayed('remind', { i }, 3_000, { jobKey: `remind-${i}` })
} else if (mode === 'cancel') {
  for (let i = 0; i < 20; i += 2) write(`cancel ${i} ${loop.jobs.cancel(`remind-${i}`)}`)
}
void loop.flushed().then(() => write('ready'))
if (stopAt !== undefined) {
  setTimeout(
    () => void loop.stop({ deadlineMs: 1_000 }).then(() => write('stopped')),
    Math.max(0, Number(stopAt) - Date.now()),
  )
}
