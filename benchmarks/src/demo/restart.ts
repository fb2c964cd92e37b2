/**
 * The demo's restart section: a loop under load is stopped with a deadline (as a SIGTERM would, via
 * `installShutdownHandlers`), hands back what it did not finish as a JSON snapshot, and a fresh loop —
 * the next process — restores it. Every payment is charged exactly once: idempotency keys refuse the
 * producer's re-sends, and a charge committed before the stop is not redone after it.
 */
import { createLoop, type LoopSnapshot } from '@flowing/core'

interface Payments {
  'payment.capture': { orderId: string; amount: number }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** One process's loop: captures are charged once (commit point), then a slow receipt is sent. */
function paymentLoop(charges: Map<string, number>) {
  const loop = createLoop<Payments>({ workers: 8, logger: false, retry: { maxAttempts: 3, baseMs: 20 } })
  loop.on('payment.capture', async (msg, ctx) => {
    if (ctx.committed === undefined) {
      await sleep(5) // the card network, called with ctx.signal: an aborted call charges nothing
      if (ctx.signal.aborted) throw ctx.signal.reason
      charges.set(msg.payload.orderId, (charges.get(msg.payload.orderId) ?? 0) + 1)
      ctx.commit({ chargedAt: Date.now() })
    }
    await sleep(10 + (msg.payload.amount % 30)) // the receipt: interrupted if the deadline comes first
  })
  return loop
}

/** Runs the section and prints what happened. */
export async function runRestartDemo(log: (line: string) => void): Promise<void> {
  const charges = new Map<string, number>()
  const first = paymentLoop(charges)
  for (let i = 0; i < 3_000; i++) {
    first.post('payment.capture', { orderId: `o-${i}`, amount: i % 97 }, { idempotencyKey: `o-${i}` })
  }
  const resent = first.tryPost('payment.capture', { orderId: 'o-7', amount: 7 }, { idempotencyKey: 'o-7' })
  log(`a producer re-sends o-7 while it is queued: ${resent.status}`)
  await sleep(150)
  const t0 = performance.now()
  const snapshot = await first.stop({ deadlineMs: 100 }) // what a SIGTERM does with installShutdownHandlers
  const stopMs = performance.now() - t0
  const json = JSON.stringify(snapshot)
  const states = new Map<string, number>()
  for (const m of snapshot.messages) states.set(m.state, (states.get(m.state) ?? 0) + 1)
  const committed = snapshot.messages.filter((m) => m.checkpoint !== undefined).length
  log(
    `stop({ deadlineMs: 100 }) resolved in ${stopMs.toFixed(0)} ms: ${first.metrics().counters.succeeded} done, ${snapshot.messages.length} handed back (${[...states].map(([s, n]) => `${n} ${s}`).join(', ')}; ${committed} already charged), snapshot ${(json.length / 1024).toFixed(0)} KB = ${(json.length / Math.max(1, snapshot.messages.length)).toFixed(0)} B per message`,
  )

  const next = paymentLoop(charges) // the next process
  const restored = next.restore(JSON.parse(json) as LoopSnapshot)
  const again = next.tryPost('payment.capture', { orderId: 'o-2999', amount: 1 }, { idempotencyKey: 'o-2999' })
  log(`restored ${restored} messages in a fresh loop; a re-send of o-2999 there: ${again.status}`)
  await next.stop()
  const once = [...charges.values()].every((n) => n === 1)
  const c = next.metrics().counters
  log(
    `orders charged: ${charges.size} of 3000, each exactly once ${once && charges.size === 3_000 ? '✔' : '✘'} (restored loop: ${c.succeeded} done, ${c.duplicates} duplicate refused)`,
  )
}
