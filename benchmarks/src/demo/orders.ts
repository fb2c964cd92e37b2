/**
 * The demo's domain: an order pipeline. `order.placed` fans out to payment, inventory and email;
 * payment is flaky (fails ~4 %), email is slow (10–60 ms), and every step is keyed by order id so one
 * order's steps never run concurrently and stay in order. Each order also schedules its payment
 * timeout (a delayed message on the loop's timing wheel) under a job key; a successful payment cancels
 * it by that key — also when it came due while the order's key was busy — so only unpaid orders are
 * closed, on time, never early.
 */
import { type Loop, Priority } from '@flowing/core'

/** The demo's message map. */
export interface OrderMessages {
  'order.placed': { orderId: string; amount: number; vip: boolean }
  'payment.charge': { orderId: string; amount: number }
  'order.updated': { orderId: string; status: 'paid' | 'declined' | 'reserved' }
  'email.send': { orderId: string; template: 'receipt' | 'declined' }
  'analytics.track': { event: string }
  'order.timeout': { orderId: string }
}

/** How long an order may stay unpaid (the demo's stand-in for "15 minutes"). */
export const PAYMENT_TIMEOUT_MS = 300

/** What the timeout flow did, for the closing report. */
export interface TimeoutStats {
  scheduled: number
  cancelledByPayment: number
  fired: number
}

/** A payment provider that declines some cards. */
export class PaymentDeclinedError extends Error {
  override name = 'PaymentDeclinedError'
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Registers the order pipeline's handlers on `loop`. */
export function registerOrderHandlers(loop: Loop<OrderMessages>, random: () => number): TimeoutStats {
  const stats: TimeoutStats = { scheduled: 0, cancelledByPayment: 0, fired: 0 }
  const timeoutOf = (orderId: string) => `payment-timeout:${orderId}`

  loop.on('order.placed', (msg, ctx) => {
    const { orderId, amount, vip } = msg.payload
    loop.postDelayed('order.timeout', { orderId }, PAYMENT_TIMEOUT_MS, { key: orderId, jobKey: timeoutOf(orderId) })
    stats.scheduled++
    ctx.post('payment.charge', { orderId, amount }, { key: orderId, priority: vip ? Priority.high : Priority.normal })
  })

  loop.on('payment.charge', async (msg, ctx) => {
    await sleep(1 + random() * 4) // the provider's latency
    const { orderId } = msg.payload
    if (random() < 0.04) {
      ctx.post('email.send', { orderId, template: 'declined' }, { key: orderId, priority: Priority.low })
      throw new PaymentDeclinedError(`card declined for ${orderId}`)
    }
    if (loop.jobs.cancel(timeoutOf(orderId)) === 'cancelled') stats.cancelledByPayment++
    ctx.post('order.updated', { orderId, status: 'paid' }, { key: orderId, priority: msg.priority })
  })

  loop.on('order.timeout', () => {
    stats.fired++ // closed unpaid
  })

  loop
    .route('order.updated', (msg) => msg.payload.status)
    .on('paid', (msg, ctx) => {
      const { orderId } = msg.payload
      ctx.post('order.updated', { orderId, status: 'reserved' }, { key: orderId })
      ctx.post('email.send', { orderId, template: 'receipt' }, { key: orderId, priority: Priority.low })
    })
    .otherwise(() => {})

  loop.on('email.send', async () => {
    await sleep(10 + random() * 50) // the slow handler: an SMTP relay
  })

  loop.on('analytics.track', () => {})
  return stats
}
