/**
 * The demo's threads section: invoices rendered by a CPU-bound handler, first in the loop — where a
 * 10 ms heartbeat message waits behind them — then on a worker-thread pool (`@flowing/threads`), where
 * the heartbeat keeps its pace; a runaway render (an endless loop) is stopped at its deadline, its
 * thread terminated and replaced.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createLoop, type Handler, HandlerTimeoutError } from '@flowing/core'
import { ThreadPool, threaded } from '@flowing/threads'
import { formatMs } from '../lib/stats.js'
import { summarizeLateness } from '../lib/wheel-fire.js'
import render, { type Invoice, type Rendered } from './invoice-render.js'

interface Billing {
  'invoice.render': Invoice
  heartbeat: number
}

const INVOICES = 40
const LINES = 6_000 // ≈ 8 ms of CPU per invoice on the test machine
const BEAT_MS = 10

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// The thread loads the compiled module: beside this file in dist/, or the build's when run from sources.
function renderModule(): URL {
  const beside = new URL('./invoice-render.js', import.meta.url)
  return existsSync(fileURLToPath(beside)) ? beside : new URL('../../dist/demo/invoice-render.js', import.meta.url)
}

interface Run {
  readonly rendered: Rendered[]
  /** How late each heartbeat started after it was posted (ms). */
  readonly beatLate: number[]
  readonly runaway: unknown
}

// Renders go through a key group as wide as the threads (plus one, to keep a thread fed): the loop's
// other workers stay free for the heartbeat instead of waiting in the pool's queue.
async function run(
  handler: Handler<Billing, 'invoice.render', Rendered>,
  slots: number,
  runaway: boolean,
): Promise<Run> {
  const loop = createLoop<Billing>({
    workers: 8,
    groups: { concurrency: slots },
    timeoutMs: 5_000,
    retry: { maxAttempts: 1 },
  })
  const beatLate: number[] = []
  loop.on('invoice.render', handler)
  loop.on('heartbeat', (m) => void beatLate.push(performance.now() - m.payload))
  const beats = setInterval(() => loop.post('heartbeat', performance.now()), BEAT_MS)
  const invoices = Array.from(
    { length: INVOICES },
    (_, i) =>
      loop.request(
        'invoice.render',
        { invoiceId: `inv-${i}`, lines: LINES },
        { key: `customer-${i % 8}`, group: 'render' },
      ) as Promise<Rendered>,
  )
  const rendered = await Promise.all(invoices)
  // Alone, after the others: a render that never returns, with a deadline of its own.
  const ended = runaway
    ? await loop
        .request('invoice.render', { invoiceId: 'inv-bad', lines: LINES, runaway: true }, { handlerTimeoutMs: 300 })
        .catch((e: unknown) => e)
    : undefined
  await sleep(2 * BEAT_MS)
  clearInterval(beats)
  await loop.stop()
  return { rendered, beatLate, runaway: ended }
}

/** Runs the section and prints what happened, line by line. */
export async function runThreadsDemo(log: (line: string) => void): Promise<void> {
  const inLoop = await run((m) => render(m.payload), 2, false)
  const p99 = (r: Run) => `${formatMs(summarizeLateness(Float64Array.from(r.beatLate)).p99)} ms`
  log(
    `in the loop:  ${inLoop.rendered.length} invoices rendered; heartbeat late p99 ${p99(inLoop)} (it waits behind the renders)`,
  )

  const pool = new ThreadPool({ minThreads: 1 })
  const renderOnThread = threaded<Billing, 'invoice.render', Rendered>(renderModule(), { pool })
  const onThreads = await run(renderOnThread, pool.maxThreads + 1, true)
  const threadsUsed = new Set(onThreads.rendered.map((r) => r.thread)).size
  log(
    `on threads:   ${onThreads.rendered.length} invoices rendered on ${threadsUsed} of ${pool.maxThreads} thread${pool.maxThreads === 1 ? '' : 's'}; heartbeat late p99 ${p99(onThreads)}`,
  )
  const stopped = onThreads.runaway instanceof HandlerTimeoutError
  log(
    `runaway:      inv-bad ${stopped ? 'timed out at its 300 ms deadline: its thread was terminated and replaced' : `ended unexpectedly: ${String(onThreads.runaway)}`}`,
  )
  const stats = pool.stats()
  log(
    `pool:         ${stats.threads} thread${stats.threads === 1 ? '' : 's'} now, run p50 ${formatMs(stats.runTime.p50)} ms, wait p50 ${formatMs(stats.waitTime.p50)} ms`,
  )
  await pool.close()
}
