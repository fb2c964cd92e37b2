// The thread side of cpu-threaded.ts: 2 ms of synchronous work per message, on a worker thread.
import { performance } from 'node:perf_hooks'

export default function resize() {
  const end = performance.now() + 2
  let spins = 0
  while (performance.now() < end) spins++
  return spins
}
