/**
 * The process the crash scene kills: a payment loop on an SQLite journal. Mode `load` posts keyed
 * payments (one in 21 fails its first attempt and backs off; a charge is recorded with `ctx.commit()`
 * before the receipt is sent) and delayed reminders, in bursts, and
 * tells the parent over IPC which posts each `flushed()` acknowledged — until it is killed. Mode
 * `finish` recovers the journal, runs what it holds to the end and exits. Every effect is appended to
 * the effects file with a synchronous write, so it survives a `kill -9` of this process.
 *
 * `node crash-child.js <journal> <effects> load|finish`
 */
import { appendFileSync } from 'node:fs'
import { createLoop, type Loop } from '@flowing/core'
import { sqliteStore } from '@flowing/sqlite'
import {
  ACCOUNTS,
  BURST,
  type ChildReport,
  type CrashMessages,
  idempotencyKey,
  isFlaky,
  isReminder,
  REMINDER_DELAY_MS,
} from './crash-account.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function paymentLoop(journal: string, effects: string): Loop<CrashMessages> {
  const loop = createLoop<CrashMessages>({
    store: sqliteStore({ path: journal }),
    workers: 16,
    logger: false,
    retry: { maxAttempts: 3, baseMs: 100, jitter: 0 },
  })
  const effect = (line: string) => appendFileSync(effects, `${line} ${process.pid}\n`)
  loop.on('payment.capture', async (m, ctx) => {
    if (ctx.committed === undefined) {
      await sleep(1 + (m.payload.seq % 3)) // the card network
      if (isFlaky(m.payload.seq) && ctx.attempt === 1) throw new Error('card network timeout: try again')
      effect(`pay-${m.payload.seq} ${m.payload.account}`) // the charge
      ctx.commit({ charged: true }) // journaled at the next commit: a retry or a recovery resumes after it
    }
    await sleep(2) // the receipt
  })
  loop.on('reminder.send', (m) => {
    effect(`remind-${m.payload.seq} ${Date.now() >= m.payload.dueAt ? 'on-time' : 'EARLY'}`)
  })
  loop.start() // recovers the journal first
  return loop
}

function report(r: ChildReport): void {
  process.send?.(r)
}

/** Posts bursts, each acknowledged, every 10 ms, until killed. */
async function load(loop: Loop<CrashMessages>): Promise<void> {
  for (let seq = 0; ; ) {
    for (const end = seq + BURST; seq < end; seq++) {
      const idem = { idempotencyKey: idempotencyKey(seq) }
      if (isReminder(seq)) {
        const dueAt = Date.now() + REMINDER_DELAY_MS
        loop.postDelayed('reminder.send', { seq, dueAt }, REMINDER_DELAY_MS, idem)
      } else {
        const account = `acct-${seq % ACCOUNTS}`
        loop.post('payment.capture', { seq, account }, { key: account, ...idem })
      }
    }
    report({ type: 'posted', to: seq })
    await loop.flushed() // durable from here on: the producer's acknowledgement
    report({ type: 'acked', to: seq })
    await sleep(10)
  }
}

/** Runs what was recovered until nothing is left (delayed and backing-off messages included). */
async function finish(loop: Loop<CrashMessages>): Promise<void> {
  for (;;) {
    await loop.drain()
    const g = loop.metrics().gauges
    if (g.delayed + g.overdue + g.retrying + g.queued + g.running === 0) break
    await sleep(10)
  }
  await loop.stop()
  report({ type: 'finished', succeeded: loop.metrics().counters.succeeded })
  process.disconnect?.()
}

const [journal, effects, mode] = process.argv.slice(2) as [string, string, 'load' | 'finish']
const loop = paymentLoop(journal, effects)
void (mode === 'load' ? load(loop) : finish(loop))
