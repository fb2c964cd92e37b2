/**
 * An I/O-bound handler: an HTTP-like call whose latency follows a log-normal distribution (median
 * 5 ms, a long right tail), to a downstream that serves at most 16 requests at once — like a
 * connection pool or a rate-limited API. More workers overlap more waiting until the 16 slots are
 * full; past that, extra workers only queue in front of the downstream.
 *
 *     flowing-tune benchmarks/examples/io-bound.ts --duration 2s
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { TunerModule } from '@flowing/tune'

interface Messages {
  'http.get': { readonly path: string }
}

/** The downstream's concurrency limit. */
const SLOTS = 16
/** Log-normal latency: median e^MU ms, shape SIGMA (0.5 gives p99 ≈ 3.2 × median). */
const MU = Math.log(5)
const SIGMA = 0.5

let free = SLOTS
// FIFO of requests waiting for a slot: a fair pool, as most connection pools are.
const waiting: (() => void)[] = []

async function acquire(): Promise<void> {
  if (free > 0) {
    free--
    return
  }
  await new Promise<void>((resolve) => waiting.push(resolve))
}

function release(): void {
  const next = waiting.shift()
  if (next) next()
  else free++
}

/** A log-normal sample (Box–Muller). */
function latencyMs(): number {
  const u = 1 - Math.random()
  const v = Math.random()
  return Math.exp(MU + SIGMA * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v))
}

export default {
  register(loop) {
    loop.on('http.get', async () => {
      await acquire()
      try {
        await sleep(latencyMs())
      } finally {
        release()
      }
    })
  },
  sample: (i) => ({ type: 'http.get', payload: { path: `/items/${i % 1000}` }, key: i % 1000 }),
} satisfies TunerModule<Messages>
