/**
 * A demo workload with something in every view: steady orders, a key blocked by a slow message with
 * others waiting behind it, a key group at its concurrency, a rate limit, a breaker forced open,
 * schedules, keyed delays and dead letters. The browser tests take the screenshots of docs/ from it.
 */
import { createLoop, type Loop, NonRetryableError, RetryableError } from '@flowing/core'
import { ThreadPool, threaded } from '@flowing/threads'
import { HOSTILE_TEXT, HOSTILE_TYPE } from './fixture.js'

export type ShowcaseMessages = Record<string, Record<string, unknown>>

/** The loop, its thread pool, and a stop for its producers, slow handlers and threads. */
export function showcase(): { loop: Loop<ShowcaseMessages>; pool: ThreadPool; stop: () => Promise<void> } {
  const pool = new ThreadPool({ minThreads: 2, maxThreads: 2 })
  const releases: (() => void)[] = []
  const slow = () => new Promise<void>((resolve) => releases.push(resolve))
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const loop = createLoop<ShowcaseMessages>({
    workers: 8,
    capacity: 5_000,
    traces: 'all',
    logger: false,
    retry: { maxAttempts: 3, baseMs: 50 },
    groups: { concurrency: 2 },
  })
  loop.on('order.paid', async () => sleep(2 + Math.random() * 8))
  loop.on('invoice.render', async (m) => (m.payload['slow'] ? slow() : sleep(20)))
  loop.on(
    'mail.send',
    async (m) => {
      if (m.payload['bounce']) throw new NonRetryableError(`mailbox ${String(m.payload['to'])} does not exist`)
      await sleep(5)
    },
    { rateLimit: { max: 20, perMs: 1000 } },
  )
  loop.on(
    'payment.charge',
    async () => {
      throw new RetryableError('payment provider answered 503', { cause: new Error('upstream timeout after 2000 ms') })
    },
    { circuitBreaker: { consecutiveFailures: 50, cooldownMs: 600_000 } },
  )
  loop.on('report.build', async () => sleep(5))
  loop.on('invoice.pdf', threaded(new URL('./fixtures/render.mjs', import.meta.url), { pool }))
  loop.on('order.timeout', async () => {})
  loop.on(HOSTILE_TYPE, async () => {
    throw new NonRetryableError(HOSTILE_TEXT)
  })

  loop.schedule('nightly-report', { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 'report.build', { kind: 'daily' })
  loop.schedule('heartbeat', { every: 30_000 }, 'report.build', { kind: 'ping' })
  for (const n of [1001, 1002, 1003]) {
    loop.postDelayed('order.timeout', { orderId: `o-${n}` }, 15 * 60_000, { jobKey: `payment-timeout:o-${n}` })
  }
  // A customer whose first message is slow: the others of the key wait behind it.
  loop.post('invoice.render', { slow: true }, { key: 'customer-42', group: 'tenant-a' })
  for (let i = 0; i < 4; i++) loop.post('invoice.render', { i }, { key: 'customer-42', group: 'tenant-a' })
  loop.post('invoice.render', { slow: true }, { key: 'customer-7', group: 'tenant-a' })
  loop.post('invoice.render', { i: 9 }, { key: 'customer-9', group: 'tenant-a' })
  for (const to of ['ann@example.com', 'bob@example.com']) loop.post('mail.send', { to, bounce: true })
  loop.post(HOSTILE_TYPE, { text: HOSTILE_TEXT })
  loop.post('payment.charge', { orderId: 'o-77', amount: 42 }, { key: 'o-77' })
  loop.post('payment.charge', { orderId: 'o-78', amount: 17 }, { key: 'o-78' })
  // The provider goes down a moment later (a page open by then sees it in the breaker history).
  const outage = setTimeout(() => loop.controls.openCircuit('payment.charge', { cooldownMs: 600_000 }), 1500)

  let n = 0
  const producer = setInterval(() => {
    for (let i = 0; i < 40; i++) loop.post('order.paid', { orderId: `o-${++n}` }, { key: `o-${n % 200}` })
    for (let i = 0; i < 3; i++) loop.post('mail.send', { to: `user${n + i}@example.com` })
    loop.post('invoice.pdf', { invoice: n })
  }, 100)
  return {
    loop,
    pool,
    stop: async () => {
      clearInterval(producer)
      clearTimeout(outage)
      for (const release of releases.splice(0)) release()
      await loop.stop({ drain: false })
      await pool.close()
    },
  }
}
