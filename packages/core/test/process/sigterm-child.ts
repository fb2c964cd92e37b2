/**
 * The child process of `sigterm.test.ts` (not a test itself): a loop under load that is stopped by a
 * real SIGTERM through `installShutdownHandlers`.
 *
 * Run: `node --conditions=@flowing/source --import tsx sigterm-child.ts <dir>`
 *
 * - posts `job-1` … `job-N` (idempotency key `job-<n>`, partition key `k<n % KEYS>`), `BATCH` per
 *   `TICK_MS`, much faster than 4 workers can run them, so a backlog builds up;
 * - each handler waits 5–40 ms, then — unless its `ctx.signal` was aborted — appends `job-<n>\n` to
 *   `<dir>/effects.log` (the side effect);
 * - prints `ready` once the first batch is posted (the handlers are installed by then);
 * - on SIGTERM the loop refuses new posts at once, so the poster stops at its first refused post;
 *   `onSnapshot` then writes `<dir>/posted.json` (every job the loop accepted, in post order) and
 *   `<dir>/snapshot.json` — after waiting for the handlers aborted at the deadline to wake up and
 *   check their signal — and the process exits with 0.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createLoop, installShutdownHandlers, LoopStoppedError, LoopStoppingError } from '../../src/index.js'

/** The message map of the child and of the test that restores its snapshot. */
export interface JobMessages {
  job: { n: number }
}

const TOTAL = 2000
const KEYS = 20
const BATCH = 50
const TICK_MS = 10

const dir = process.argv[2]
if (dir === undefined) throw new Error('usage: sigterm-child.ts <dir>')
const effectsFile = path.join(dir, 'effects.log')

const loop = createLoop<JobMessages>({ workers: 4, idempotency: {}, logger: false })

loop.on('job', async (m, ctx) => {
  const signal = ctx.signal
  const n = m.payload.n
  await new Promise((resolve) => setTimeout(resolve, 5 + ((n * 7919) % 36))) // 5–40 ms
  if (signal.aborted) return // handed back in the snapshot: the restored loop runs it
  fs.appendFileSync(effectsFile, `job-${n}\n`)
})

// Exactly the jobs the loop accepted: a post that returned. The first refused one ends the posting.
const posted: string[] = []
let next = 1
let refused: string | undefined

function postBatch(): void {
  for (let i = 0; i < BATCH && next <= TOTAL; i++, next++) {
    const id = `job-${next}`
    try {
      loop.post('job', { n: next }, { key: `k${next % KEYS}`, idempotencyKey: id })
    } catch (error) {
      if (error instanceof LoopStoppingError || error instanceof LoopStoppedError) {
        refused = error.name
        clearInterval(poster)
        return
      }
      throw error
    }
    posted.push(id)
  }
  if (next > TOTAL) clearInterval(poster)
}

installShutdownHandlers(loop, {
  deadlineMs: 200,
  onSnapshot: async (snapshot) => {
    // Let the handlers aborted at the deadline wake up (they wait ≤ 40 ms) before the process exits, so
    // an effect they wrongly made despite the abort would show up in effects.log.
    await new Promise((resolve) => setTimeout(resolve, 100))
    fs.writeFileSync(path.join(dir, 'posted.json'), JSON.stringify({ posted, total: TOTAL, refused }))
    fs.writeFileSync(path.join(dir, 'snapshot.json'), JSON.stringify(snapshot))
  },
})

// Stay alive until signalled (even once everything is done), but never forever.
const keepAlive = setTimeout(() => {
  console.error('sigterm-child: no signal within 60 s')
  process.exit(3)
}, 60_000)
process.on('exit', () => clearTimeout(keepAlive))

const poster = setInterval(postBatch, TICK_MS)
postBatch()
process.stdout.write('ready\n')
