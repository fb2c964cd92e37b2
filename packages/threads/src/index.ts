/**
 * `@flowing/threads`: CPU-bound handlers on a worker-thread pool (piscina), with the loop's guarantees
 * across the hop.
 *
 * ```ts no-run
 * import { createLoop } from '@flowing/core'
 * import { threaded } from '@flowing/threads'
 *
 * const loop = createLoop<{ resize: { path: string } }>()
 * loop.on('resize', threaded(new URL('./resize.js', import.meta.url)), { timeoutMs: 5_000 })
 * ```
 *
 * @module
 */
export { ThreadCrashedError, ThreadModuleError, UncloneablePayloadError } from './errors.js'
export { setDefaultPool, ThreadPool, type ThreadPoolOptions, type ThreadPoolStats, type TimeSummary } from './pool.js'
export { type ThreadedOptions, threaded } from './threaded.js'
export type { ThreadContext } from './wire.js'
