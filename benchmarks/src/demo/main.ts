/**
 * The Flowing demo (`pnpm start`): an order-processing loop under a realistic day — steady orders
 * with VIP priority, a flaky payment provider, a slow email relay, then a flood of analytics events
 * that fills the queue (drop-oldest-lowest keeps the orders flowing), a producer that waits for space
 * with `send()`, and a graceful stop. Live status every 400 ms, a metrics table at the end. Then a
 * second loop with watermark backpressure is flooded, and its timeline printed; last, a handler that
 * hangs is timed out, fenced and compensated, and the stall detector reports one that never yields;
 * CPU-bound renders move to worker threads (@flowing/threads) and a runaway one is stopped;
 * last, a flaky downstream with an outage: retries with back-off, dead letters, de-noised alerts and a
 * circuit breaker that holds records until the downstream recovers; and a restart: a stop with a
 * deadline hands back a snapshot that the next loop restores, every payment charged exactly once;
 * and a crash: a process on an SQLite journal is killed with `kill -9` under load, and the next one
 * recovers and finishes what it had acknowledged. All along, @flowing/dashboard serves a live page over
 * the order loop and a support desk on a local port it prints.
 */
import { createLoop, Priority } from '@flowing/core'
import { runFlood } from '../flood/scenario.js'
import { floodSummary, timelineTable } from '../flood/timeline.js'
import { mulberry32 } from '../lib/random.js'
import { runCrashDemo } from './crash.js'
import { startDemoDashboard } from './dashboard.js'
import { runFailuresDemo } from './failures.js'
import { type OrderMessages, PAYMENT_TIMEOUT_MS, registerOrderHandlers } from './orders.js'
import { closingReport, liveLine } from './report.js'
import { runRestartDemo } from './restart.js'
import { runThreadsDemo } from './threads.js'
import { runTimeoutsDemo } from './timeouts.js'

const random = mulberry32(42) // the same story on every run
const loop = createLoop<OrderMessages>({ capacity: 2_000, workers: 16, overflow: 'drop-oldest-lowest' })
const timeouts = registerOrderHandlers(loop, random)
// The live dashboard over this loop and a support desk that runs all along (its own random source).
const board = await startDemoDashboard(loop, mulberry32(7), (line) => console.log(line))

let phase = 'steady'
const started = performance.now()
const ticker = setInterval(() => console.log(liveLine(performance.now() - started, phase, loop.metrics())), 400)
let declines = 0
loop.events.on('failed', () => declines++)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
let orderNo = 0
function placeOrders(count: number): void {
  for (let i = 0; i < count; i++) {
    const orderId = `o-${++orderNo}`
    const vip = random() < 0.1
    loop.post(
      'order.placed',
      { orderId, amount: Math.round(random() * 500), vip },
      { key: orderId, priority: vip ? Priority.high : Priority.normal },
    )
  }
}

console.log('Flowing demo — order processing: 16 workers, capacity 2,000, overflow drop-oldest-lowest\n')

// 1. Steady state: 200 orders/s for 1.5 s.
for (let t = 0; t < 30; t++) {
  placeOrders(10)
  await sleep(50)
}

// 2. Flood: 30,000 best-effort analytics events in one burst while orders keep coming.
phase = 'flood'
for (let i = 0; i < 30_000; i++) {
  loop.post('analytics.track', { event: `page-view-${i}` }, { priority: Priority.background })
}
// A partner feed that prefers a refusal to silent loss: per-post `reject` policy, sync result, no throw.
let refused = 0
for (let i = 0; i < 5_000; i++) {
  const result = loop.tryPost(
    'analytics.track',
    { event: `partner-${i}` },
    { priority: Priority.low, overflow: 'reject' },
  )
  if (result.status === 'full') refused++
}
for (let t = 0; t < 20; t++) {
  placeOrders(10)
  await sleep(50)
}

// 3. A batch import that must not lose anything: it waits for space instead of dropping.
phase = 'backfill'
const backfill: Promise<unknown>[] = []
for (let i = 0; i < 1_500; i++) {
  const orderId = `import-${i}`
  backfill.push(
    loop.send(
      'order.placed',
      { orderId, amount: 10, vip: false },
      { key: orderId, priority: Priority.low, overflow: 'wait' },
    ),
  )
}
await Promise.all(backfill)
await loop.drain()
await sleep(PAYMENT_TIMEOUT_MS + 50) // let the last unpaid orders time out

// 4. Graceful stop: refuse new posts, drain what is queued.
phase = 'stopping'
await loop.stop()
clearInterval(ticker)
console.log(liveLine(performance.now() - started, 'stopped', loop.metrics()))
console.log(`\n${declines} payments declined (the failing handler); the loop kept going.`)
console.log(
  `${timeouts.scheduled} payment timeouts scheduled on the timing wheel: ${timeouts.cancelledByPayment} cancelled by payment, ${timeouts.fired} fired (unpaid orders closed after ${PAYMENT_TIMEOUT_MS} ms, never early).`,
)
console.log(`${refused} partner events refused with QueueFullError results during the flood (none lost silently).\n`)
console.log(closingReport(loop.metrics()))

// 5. A second loop, with watermark backpressure (60 / 80 / 95 %), flooded by producers three times
// faster than its workers: best-effort events are shed first, urgent payments wait in send().
console.log('\nFlood with watermark backpressure — producers 3× faster than 8 workers, capacity 2,000:\n')
const flood = await runFlood({ durationMs: 1_500, intervalMs: 250 })
console.log(timelineTable(flood))
console.log(`\n${floodSummary(flood)}`)

// 6. Timeouts: a handler hangs on a slow dependency; another spins without yielding.
console.log('\nTimeouts — timeoutMs 100, graceMs 150, stall detection on:\n')
await runTimeoutsDemo((line) => console.log(line))

// 6b. CPU-bound work: in the loop it delays everything; on worker threads it does not, and a runaway
// render is stopped at its deadline.
console.log(
  `\nThreads — 40 invoices of ~8 ms CPU each, with a 10 ms heartbeat; then on @flowing/threads, with a runaway:\n`,
)
await runThreadsDemo((line) => console.log(line))

// 7. Failures: a flaky downstream, then an outage — retries, dead letters, alerts, the breaker.
console.log(
  '\nFailures — 80 % ok, 15 % retryable, 5 % for good, then an 800 ms outage (5 attempts, breaker, alerts):\n',
)
await runFailuresDemo((line) => console.log(line))

// 8. A restart: stop with a deadline, snapshot, restore in a fresh loop — every payment charged once.
console.log('\nRestart — 3,000 captures, stop with a 100 ms deadline under load, restore in a fresh loop:\n')
await runRestartDemo((line) => console.log(line))

// 9. A crash: kill -9 a process on an SQLite journal mid-load; the next process recovers its journal.
console.log('\nCrash — a child process on an SQLite journal, kill -9 under load, a second process on the same file:\n')
await runCrashDemo((line) => console.log(line))

await board.close()
