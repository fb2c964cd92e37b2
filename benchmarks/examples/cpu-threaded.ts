/**
 * A CPU-bound handler moved onto threads: 2 ms of synchronous work per message, run by
 * `@flowing/threads` on its default pool. The tuner sizes the pool (`--threads`) as well as the
 * loop's workers: the threads bound the throughput, and the loop needs enough workers to keep every
 * thread fed while each hop comes back.
 *
 *     flowing-tune benchmarks/examples/cpu-threaded.ts --threads 1,2 --workers 1,2,4,8 --duration 2s
 */

import { threaded } from '@flowing/threads'
import type { TunerModule } from '@flowing/tune'

interface Messages {
  'image.resize': { readonly id: number }
}

const WORK = new URL('./cpu-thread-work.mjs', import.meta.url)

export default {
  register(loop) {
    // No `pool` option: the default pool, which the tuner sizes to each --threads count.
    loop.on('image.resize', threaded<Messages, 'image.resize'>(WORK))
  },
  sample: (i) => ({ type: 'image.resize', payload: { id: i }, key: i % 1000 }),
} satisfies TunerModule<Messages>
