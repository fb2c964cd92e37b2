/**
 * A handler that contends on a shared lock: 2 ms of I/O (log-normal), then a critical section (250 µs of work and one
 * await) under one process-wide mutex — say, a cache rebuilt in place. The mutex is the common naive kind that
 * wakes every waiter on release ("thundering herd"); each woken waiter re-reads the shared state
 * (40 µs) before it either wins or waits again. With few workers the I/O overlaps and throughput rises;
 * with many, each release wakes more losers, the lock's hand-over slows down, and throughput drops.
 *
 *     flowing-tune benchmarks/examples/shared-lock.ts --duration 2s
 */
import { EventEmitter, once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import type { TunerModule } from '@flowing/tune'

interface Messages {
  'cache.update': { readonly entry: number }
}

const IO_MEDIAN_MS = 2
const CRITICAL_US = 250
const RECHECK_US = 40

let held = false
const released = new EventEmitter().setMaxListeners(0)

function busy(us: number): void {
  const end = performance.now() + us / 1000
  while (performance.now() < end) {
    // spin: the work is synchronous
  }
}

async function lock(): Promise<void> {
  while (held) {
    await once(released, 'release')
    busy(RECHECK_US) // every woken waiter pays to re-validate before retrying
  }
  held = true
}

function unlock(): void {
  held = false
  released.emit('release')
}

function ioMs(): number {
  const u = 1 - Math.random()
  const v = Math.random()
  return IO_MEDIAN_MS * Math.exp(0.5 * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v))
}

export default {
  register(loop) {
    loop.on('cache.update', async () => {
      await sleep(ioMs())
      await lock()
      try {
        busy(CRITICAL_US)
        await nextTurn() // write back: the lock is held across an await, as real critical sections are
      } finally {
        unlock()
      }
    })
  },
  sample: (i) => ({ type: 'cache.update', payload: { entry: i }, key: i % 1000 }),
} satisfies TunerModule<Messages>
