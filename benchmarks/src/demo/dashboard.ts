/**
 * The demo's dashboard (@flowing/dashboard) on a local port it prints: the order loop of the demo's
 * first part, and a small "support desk" loop that runs all along — a steady trickle of tickets keyed
 * by customer, a slow customer whose tickets queue behind each other, a flaky mailer that dead-letters
 * now and then, reminders under job keys, a schedule. `FLOWING_DASHBOARD_PORT` picks the port (a free
 * one by default); `FLOWING_DASHBOARD_HOLD=1` keeps it open after the demo until Ctrl-C.
 */
import { createLoop, type Loop, NonRetryableError } from '@flowing/core'
import { createDashboard, type DashboardLoop, type ServedDashboard, serve } from '@flowing/dashboard'

type Desk = {
  'ticket.opened': { customer: string; subject: string }
  'reply.send': { customer: string; to: string }
  'ticket.remind': { customer: string }
  'report.daily': { kind: string }
}

/** The demo's dashboard, its support-desk loop, and how to end both. */
export interface DemoDashboard {
  readonly url: string
  /** Closes the page's streams, the server, and the desk loop (after a hold, if asked for one). */
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function supportDesk(random: () => number): { desk: Loop<Desk>; stop: () => Promise<void> } {
  const desk = createLoop<Desk>({ workers: 4, retry: { maxAttempts: 3, baseMs: 100 }, logger: false })
  desk.on('ticket.opened', async (m, ctx) => {
    await sleep(m.payload.customer === 'acme' ? 400 : 5 + random() * 20)
    ctx.post('reply.send', { customer: m.payload.customer, to: `${m.payload.customer}@example.com` })
    desk.postDelayed('ticket.remind', { customer: m.payload.customer }, 60_000, {
      jobKey: `remind:${m.payload.customer}`,
      jobKeyMode: 'debounce',
    })
  })
  desk.on('reply.send', async (m) => {
    if (random() < 0.03) throw new NonRetryableError(`mailbox ${m.payload.to} is full`)
    await sleep(3)
  })
  desk.on('ticket.remind', async () => {})
  desk.on('report.daily', async () => {})
  desk.schedule('daily-report', { cron: '0 7 * * 1-5', tz: 'Europe/Berlin' }, 'report.daily', { kind: 'tickets' })
  const customers = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'wonka']
  let n = 0
  const trickle = setInterval(() => {
    for (let i = 0; i < 4; i++) {
      const customer = customers[Math.floor(random() * customers.length)] as string
      desk.post('ticket.opened', { customer, subject: `ticket ${++n}` }, { key: customer })
    }
  }, 100)
  return {
    desk,
    stop: async () => {
      clearInterval(trickle)
      await desk.stop({ drain: false })
    },
  }
}

/** Starts the demo's dashboard over `orders` and a support desk; prints where to open it. */
export async function startDemoDashboard(
  orders: DashboardLoop,
  random: () => number,
  print: (line: string) => void,
): Promise<DemoDashboard> {
  const { desk, stop } = supportDesk(random)
  const dashboard = createDashboard({
    loops: { orders, desk },
    payloads: 'shown',
    authorize: (req) => req.socket.remoteAddress === '127.0.0.1' || req.socket.remoteAddress === '::1',
  })
  const port = Number(process.env['FLOWING_DASHBOARD_PORT'] ?? 0)
  const served: ServedDashboard = await serve(dashboard, { port: Number.isInteger(port) ? port : 0 })
  print(`Dashboard: ${served.url}  (live while the demo runs; FLOWING_DASHBOARD_HOLD=1 keeps it open after)\n`)
  return {
    url: served.url,
    close: async () => {
      if (process.env['FLOWING_DASHBOARD_HOLD'] === '1') {
        print(`\nThe dashboard stays open at ${served.url} — Ctrl-C to end.`)
        await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()))
      }
      await served.close()
      await stop()
    },
  }
}
