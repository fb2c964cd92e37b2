/**
 * The demo's timeout section: a handler hangs on a slow carrier API. The loop times it out, frees its
 * worker, fences its late follow-up, runs its compensation once, counts its late completion — and the
 * stall detector reports a handler that spins without yielding.
 */
import { createLoop, FencedError } from '@flowing/core'

interface Shipping {
  'shipment.book': { orderId: string }
  'shipment.notify': { orderId: string }
  'report.build': { rows: number }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Runs the section and prints what happened, line by line. */
export async function runTimeoutsDemo(log: (line: string) => void): Promise<void> {
  const loop = createLoop<Shipping>({
    workers: 2,
    timeoutMs: 100,
    graceMs: 150,
    stall: { intervalMs: 50, blockedMs: 150 },
  })
  const t0 = performance.now()
  const at = () => `${Math.round(performance.now() - t0)} ms`.padStart(7)
  loop.events.on('failed', (m, e) =>
    log(`${at()}  ${m.type} ${JSON.stringify(m.payload)} failed: ${(e as Error).message}`),
  )
  loop.events.on('compensated', (m, e) =>
    log(`${at()}  compensated ${m.type} ${JSON.stringify(m.payload)}${e ? ` (error: ${e})` : ''}`),
  )
  loop.events.on('stall', (r) =>
    log(
      `${at()}  STALL (${r.kind}): event loop ${Math.round(r.lagMs)} ms late; running: ${r.running.map((a) => `${a.label} for ${Math.round(a.ageMs)} ms`).join(', ') || 'nothing'}`,
    ),
  )
  loop.on(
    'shipment.book',
    async (msg, ctx) => {
      await sleep(msg.payload.orderId === 'o-hang' ? 400 : 20) // the carrier API hangs for o-hang
      try {
        ctx.post('shipment.notify', { orderId: msg.payload.orderId })
      } catch (error) {
        if (error instanceof FencedError) log(`${at()}  fenced: the hung handler's late follow-up was refused`)
      }
    },
    { compensate: () => sleep(5) }, // release the truck slot it may have reserved
  )
  loop.on('shipment.notify', () => {})
  loop.on('report.build', (msg) => {
    const until = performance.now() + msg.payload.rows // a report that never yields
    while (performance.now() < until) {}
  })

  loop.post('shipment.book', { orderId: 'o-hang' })
  loop.post('shipment.book', { orderId: 'o-ok' })
  await sleep(160)
  loop.post('report.build', { rows: 250 })
  await sleep(450)
  await loop.stop()
  const c = loop.metrics().counters
  log(
    `${at()}  ${c.succeeded} succeeded, ${c.failed} failed (${c.timedOut} timed out), ${c.lateCompletions} late completion swallowed, ${c.fenced} effect fenced`,
  )
}
