/**
 * A CPU-bound handler: 200 µs of synchronous work per message (parsing, hashing, rendering). Flowing's
 * workers share one JavaScript thread, so no worker count can run two of these at once: the sweep is
 * flat, and the tuner points at worker_threads (e.g. piscina) instead.
 *
 *     flowing-tune benchmarks/examples/cpu-bound.ts --duration 2s
 */
import { performance } from 'node:perf_hooks'
import type { TunerModule } from '@flowing/tune'

interface Messages {
  'image.resize': { readonly id: number }
}

/** Synchronous work per message. */
const WORK_US = 200

function busy(us: number): number {
  const end = performance.now() + us / 1000
  let spins = 0
  while (performance.now() < end) spins++
  return spins
}

export default {
  register(loop) {
    loop.on('image.resize', async () => {
      busy(WORK_US)
    })
  },
  sample: (i) => ({ type: 'image.resize', payload: { id: i }, key: i % 1000 }),
} satisfies TunerModule<Messages>
