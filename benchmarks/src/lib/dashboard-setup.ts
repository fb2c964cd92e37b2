/**
 * What every run of the dashboard benchmark is made of: the suite's streamed shape fed to a fresh
 * loop without end, the dashboard mounted on a `node:http` server, a page opened and closed, and a
 * window that counts the messages finished in it.
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLoop, type Loop, type PriorityLevel } from '@flowing/core'
import { createDashboard, type Dashboard } from '@flowing/dashboard'
import { BenchError, expectEqual } from './check.js'
import { PageClient, sleep, waitUntil } from './dashboard-page.js'
import type { BenchMessages } from './flowing.js'
import { collect } from './gc.js'
import { mulberry32 } from './random.js'
import { STREAM_BATCH } from './workload.js'

export const WORKERS = 8
export const KEY_COUNT = 10_000
const CAPACITY = 1_000_000
/** The per-message events the dashboard listens to only while a page is open (and then in samples). */
export const PER_MESSAGE = ['posted', 'started', 'finished'] as const

const KEYS = Array.from({ length: KEY_COUNT }, (_, i) => `k${i}`)
const PRIORITY_MASK = 0xffff
const PRIORITIES = (() => {
  const random = mulberry32(0xda5b)
  return Uint8Array.from({ length: PRIORITY_MASK + 1 }, () => Math.floor(random() * 10))
})()

/** The loop of one run, after a full collection: 8 workers, a no-op async handler, room to spare. */
export function benchLoop(): Loop<BenchMessages> {
  collect()
  const loop = createLoop<BenchMessages>({ capacity: CAPACITY, workers: WORKERS })
  loop.on('tick', async () => {})
  return loop
}

/**
 * Posts the streamed shape until stopped: 1,000 posts per event-loop turn, `setImmediate` between.
 * @returns stop: resolves with the number of messages posted once the last batch is in
 */
export function feed(loop: Loop<BenchMessages>): () => Promise<number> {
  let next = 0
  let running = true
  let stopped: () => void = () => undefined
  const done = new Promise<void>((resolve) => {
    stopped = resolve
  })
  const turn = (): void => {
    if (!running) {
      stopped()
      return
    }
    const end = next + STREAM_BATCH
    for (let i = next; i < end; i++) {
      const priority = PRIORITIES[i & PRIORITY_MASK] as PriorityLevel
      loop.post('tick', i, { key: KEYS[i % KEY_COUNT] as string, priority })
    }
    next = end
    setImmediate(turn)
  }
  turn()
  return async () => {
    running = false
    await done
    return next
  }
}

/** A dashboard over one loop (named `bench`), its handler on a server on 127.0.0.1. */
export interface Mounted {
  readonly dashboard: Dashboard
  readonly server: Server
  /** `http://127.0.0.1:<port>/flowing` */
  readonly base: string
}

/** Creates the dashboard over `loop` and serves it on 127.0.0.1, port chosen by the OS. */
export async function mount(loop: Loop<BenchMessages>): Promise<Mounted> {
  const dashboard = createDashboard({ loops: { bench: loop } })
  const server = createServer(dashboard.handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { dashboard, server, base: `http://127.0.0.1:${port}${dashboard.basePath}` }
}

/** Closes the dashboard (ending any stream) and its server. */
export async function unmount({ dashboard, server }: Mounted): Promise<void> {
  dashboard.close()
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
}

/** @throws BenchError unless `loop` has no listener for any per-message event */
export function expectNoPerMessageListeners(what: string, loop: Loop<BenchMessages>): void {
  for (const event of PER_MESSAGE) expectEqual(`${what}: listeners for '${event}'`, loop.events.listenerCount(event), 0)
}

/** Opens the page of `view` and waits for its first two ticks: from there the dashboard only samples. */
export async function openPage(what: string, mounted: Mounted, view: string): Promise<PageClient> {
  const page = new PageClient(`${mounted.base}/api/loops/bench/stream?view=${view}`, view)
  await page.waitForTicks(2, 10_000)
  expectEqual(`${what}: dashboard.pages with the page open`, mounted.dashboard.pages, 1)
  return page
}

/** Closes the page; the dashboard must see it gone and leave the loop without per-message listeners. */
export async function closePage(what: string, page: PageClient, mounted: Mounted, loop: Loop<BenchMessages>) {
  await page.close()
  const closed = () => mounted.dashboard.pages === 0
  await waitUntil(`${what}: dashboard.pages back to 0 after the page closed`, closed, 5_000)
  expectNoPerMessageListeners(`${what}, page closed`, loop)
}

/** What one window measured. */
export interface WindowReading {
  /** Messages that finished (`counters.succeeded`) in the window, per second. */
  readonly rate: number
  /** Ticks the page received in the window (NaN without a page). */
  readonly ticks: number
}

/**
 * Counts the messages that finish in the next `ms`. With a page, checks it is still open at the end
 * and got a tick a second in the window (at least 2 in a window of 2 s or more).
 */
export async function measureWindow(
  what: string,
  loop: Loop<BenchMessages>,
  ms: number,
  page?: Open,
): Promise<WindowReading> {
  const succeeded = () => loop.metrics().counters.succeeded
  const ticks = () => [page?.page.ticks ?? Number.NaN, page?.page.sampled ?? Number.NaN]
  const [t0, s0, [k0, p0]] = [performance.now(), succeeded(), ticks()]
  await sleep(ms)
  const [t1, s1, [k1, p1]] = [performance.now(), succeeded(), ticks()]
  if (page !== undefined) checkTicks(what, page, ms, (k1 as number) - (k0 as number), (p1 as number) - (p0 as number))
  return { rate: ((s1 - s0) * 1000) / (t1 - t0), ticks: (k1 as number) - (k0 as number) }
}

/** The page is open at the window's end, got ≥ 2 ticks in a window of 2 s or more, all of them sampled. */
function checkTicks(what: string, page: Open, ms: number, ticks: number, sampled: number): void {
  expectEqual(`${what}: dashboard.pages at the window's end`, page.mounted.dashboard.pages, 1)
  const expected = Math.min(2, Math.floor(ms / 1000))
  if (ticks < expected) {
    throw new BenchError(`${what}: the page received ${ticks} tick(s) in the window, expected ≥ ${expected}`)
  }
  expectEqual(`${what}: ticks in the window with sampled per-type rates`, sampled, ticks)
}

/** An open page and the dashboard it shows. */
export interface Open {
  readonly page: PageClient
  readonly mounted: Mounted
}
