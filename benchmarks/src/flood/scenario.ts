/**
 * The flood: producers three times faster than the workers, against a loop with watermark
 * backpressure. Best-effort traffic (`Priority.low`) uses `tryPost` and is shed first; urgent traffic
 * (`Priority.critical`) uses `send()` and waits instead of being refused, so none of it is lost.
 * Records a timeline — fill, level, admitted / shed / rejected per interval, heap — and checks the
 * claims at the end.
 */
import { createLoop, Priority } from '@flowing/core'

/** One line of the timeline. */
export interface FloodSample {
  readonly atMs: number
  readonly fill: number
  readonly level: string
  readonly admitted: number
  readonly shed: number
  readonly rejected: number
  readonly heapMb: number
}

/** What the flood measured. */
export interface FloodResult {
  readonly timeline: readonly FloodSample[]
  readonly offeredPerSec: number
  readonly processedPerSec: number
  readonly maxFill: number
  readonly urgentSent: number
  readonly urgentProcessed: number
  readonly lowShed: number
  readonly lowRejected: number
  readonly urgentRefusals: number
  readonly heapGrowthMb: number
  readonly failures: readonly string[]
}

/** Knobs of the flood. */
export interface FloodOptions {
  /** How long producers flood (ms). */
  readonly durationMs: number
  /** Timeline resolution (ms). */
  readonly intervalMs: number
}

const WORKERS = 8
const CAPACITY = 2_000
const HANDLER_MS = 2
const TICK_MS = 10

interface Flood {
  'event.track': { n: number }
  'payment.capture': { n: number }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Runs the flood and returns its timeline and verdicts. */
export async function runFlood({ durationMs, intervalMs }: FloodOptions): Promise<FloodResult> {
  const loop = createLoop<Flood>({ capacity: CAPACITY, workers: WORKERS, backpressure: true, overflow: 'wait' })
  let processed = 0
  let urgentProcessed = 0
  const work = () => sleep(HANDLER_MS).then(() => void processed++)
  loop.on('event.track', work)
  loop.on('payment.capture', () => work().then(() => void urgentProcessed++))

  // Measure the workers' real rate first, then offer three times as much.
  const capacityPerSec = await measureRate(loop)
  processed = 0
  const perTick = Math.ceil(((capacityPerSec * 3) / 1000) * TICK_MS)
  const counts = { admitted: 0, shed: 0, rejected: 0 }
  let lowShed = 0
  let lowRejected = 0
  let urgentRefusals = 0
  const urgent: Promise<unknown>[] = []
  const timeline: FloodSample[] = []
  let maxFill = 0
  let offered = 0
  const heapStart = process.memoryUsage().heapUsed
  const started = performance.now()
  let nextSample = started + intervalMs
  for (let n = 0; performance.now() - started < durationMs; ) {
    for (let i = 0; i < perTick; i++, n++, offered++) {
      if (n % 10 === 0) {
        urgent.push(
          loop.send('payment.capture', { n }, { priority: Priority.critical }).then(
            () => void counts.admitted++,
            () => void urgentRefusals++,
          ),
        )
        continue
      }
      const result = loop.tryPost('event.track', { n }, { priority: Priority.low })
      if (result.ok) {
        counts.admitted++
      } else if (result.status === 'shed') {
        counts.shed++
        lowShed++
      } else {
        counts.rejected++
        lowRejected++
      }
    }
    maxFill = Math.max(maxFill, loop.metrics().gauges.fill)
    await sleep(TICK_MS)
    if (performance.now() >= nextSample) {
      const { gauges } = loop.metrics()
      timeline.push({
        atMs: performance.now() - started,
        fill: gauges.fill,
        level: gauges.pressure,
        ...counts,
        heapMb: process.memoryUsage().heapUsed / 2 ** 20,
      })
      counts.admitted = counts.shed = counts.rejected = 0
      nextSample += intervalMs
    }
  }
  const floodEnd = performance.now()
  await Promise.all(urgent)
  await loop.drain()
  const processedPerSec = processed / ((performance.now() - started) / 1000)
  await loop.stop()
  const heapGrowthMb = (process.memoryUsage().heapUsed - heapStart) / 2 ** 20

  const failures: string[] = []
  if (maxFill > 0.95) failures.push(`fill reached ${(maxFill * 100).toFixed(1)} % (> 95 %)`)
  if (urgentProcessed !== urgent.length) failures.push(`urgent: ${urgent.length} sent, ${urgentProcessed} processed`)
  if (urgentRefusals > 0) failures.push(`${urgentRefusals} urgent sends were refused`)
  if (lowShed + lowRejected === 0) failures.push('nothing was shed: the flood did not flood')
  const c = loop.metrics().counters
  if (c.accepted !== c.succeeded) failures.push(`accepted ${c.accepted} ≠ succeeded ${c.succeeded}`)
  return {
    timeline,
    offeredPerSec: offered / ((floodEnd - started) / 1000),
    processedPerSec,
    maxFill,
    urgentSent: urgent.length,
    urgentProcessed,
    lowShed,
    lowRejected,
    urgentRefusals,
    heapGrowthMb,
    failures,
  }
}

// Saturates the workers for 300 ms and returns their throughput (msgs/s).
async function measureRate(loop: ReturnType<typeof createLoop<Flood>>): Promise<number> {
  const t0 = performance.now()
  const before = loop.metrics().counters.succeeded
  while (performance.now() - t0 < 300) {
    while (loop.queued < WORKERS * 4) loop.post('event.track', { n: -1 }, { priority: Priority.high })
    await sleep(1)
  }
  await loop.drain()
  return ((loop.metrics().counters.succeeded - before) / (performance.now() - t0)) * 1000
}
