/**
 * A child process for the crash test: recovers the journal at `path`, then (mode `load`) posts keyed
 * payments and delayed reminders in bursts, acknowledging each burst after `flushed()`, until it is
 * killed; or (mode `finish`) runs what it recovered to the end and exits. Every handler start and
 * effect is appended to the log file with a synchronous write (it survives a kill -9 of this process).
 */
import { appendFileSync } from 'node:fs'
import { createLoop } from '@flowing/core'
import { sqliteStore } from '../src/index.js'

const [path, log, mode, first] = process.argv.slice(2) as [string, string, 'load' | 'finish', string]
interface Messages {
  pay: { i: number; key: string }
  remind: { i: number; dueAt: number }
}
const loop = createLoop<Messages>({
  store: sqliteStore({ path }),
  workers: 4,
  logger: false,
  retry: { maxAttempts: 3, baseMs: 5, jitter: 0 },
})
const write = (line: string) => appendFileSync(log, `${line}\n`)
loop.on('pay', async (m, ctx) => {
  write(`start ${m.payload.key} ${m.payload.i} ${ctx.attempt}`)
  await new Promise((r) => setTimeout(r, m.payload.i % 3))
  if (m.payload.i % 7 === 0 && ctx.attempt === 1) throw new Error('transient: try again')
  write(`effect pay-${m.payload.i}`)
})
// The crash-loop guard letters a message that was running at `maxCrashes` kills (by design: the test
// kills at random, so any message may be a bystander that often): an outcome, logged so the test can
// tell it from a loss.
loop.events.on('dead-lettered', (m, letter) => {
  const name =
    m.type === 'pay' ? `pay-${(m.payload as Messages['pay']).i}` : `remind-${(m.payload as Messages['remind']).i}`
  write(`lettered ${name} ${letter.error.name}`)
})
loop.on('remind', (m) => {
  write(`${Date.now() >= m.payload.dueAt ? 'effect' : 'EARLY'} remind-${m.payload.i}`)
})
loop.start()

if (mode === 'finish') {
  const settle = async () => {
    for (;;) {
      await loop.drain()
      const g = loop.metrics().gauges
      if (g.delayed + g.overdue + g.retrying === 0 && loop.queued === 0) break
      await new Promise((r) => setTimeout(r, 20))
    }
    await loop.stop()
    write('finished')
  }
  void settle()
} else {
  let i = Number(first)
  const burst = async () => {
    // Recovered backlogs add up across the crashes: a burst waits for room rather than overflow the queue.
    while (loop.queued > 5_000) await new Promise((r) => setTimeout(r, 5))
    const from = i
    for (let k = 0; k < 50; k++, i++) {
      if (i % 10 === 9) loop.postDelayed('remind', { i, dueAt: Date.now() + 40 }, 40, { idempotencyKey: `remind-${i}` })
      else loop.post('pay', { i, key: `acct-${i % 5}` }, { key: `acct-${i % 5}`, idempotencyKey: `pay-${i}` })
    }
    await loop.flushed()
    write(`ack ${from} ${i}`)
    setTimeout(burst, 2)
  }
  void burst()
}
