/**
 * Section 2 — a rate limit that binds: a route limited to 50k starts/s (as `max` per `perMs`), the
 * rate achieved against the configured one, and the largest count of handler starts seen in any
 * sliding window of `perMs` (must be ≤ `max`).
 *
 * @module
 */
import { createLoop } from '@flowing/core'
import { expectEqual } from '../lib/check.js'
import type { BenchMessages } from '../lib/flowing.js'
import { WORKERS } from './limiter-cost.js'

/** One binding configuration. */
export interface BindingConfig {
  readonly max: number
  readonly perMs: number
}

/** The configurations: 50k/s as 500 per 10 ms and 50 per 1 ms. */
export const BINDING_CONFIGS: readonly BindingConfig[] = [
  { max: 500, perMs: 10 },
  { max: 50, perMs: 1 },
]

/** What one run of a binding limit saw. */
export interface BindingSample {
  readonly config: BindingConfig
  /** Configured starts per second. */
  readonly configured: number
  /** (n − max) starts over the time from the first start to the last: the steady rate. */
  readonly achieved: number
  /** Most starts in any window of `perMs` (handler start times, `performance.now()`). */
  readonly maxInWindow: number
  /** Times a message waited for the budget (metrics counters.rateLimited). */
  readonly holds: number
}

/** Most entries of the increasing `times` within any window `(t − perMs, t]`. */
export function maxInWindow(times: Float64Array, perMs: number): number {
  let best = 0
  let lo = 0
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[lo] as number) <= (times[hi] as number) - perMs) lo++
    best = Math.max(best, hi - lo + 1)
  }
  return best
}

/** Posts `n` messages to the limited route at once and records every handler start. */
export async function runBinding(config: BindingConfig, n: number): Promise<BindingSample> {
  const loop = createLoop<BenchMessages>({ capacity: n, workers: WORKERS })
  const starts = new Float64Array(n)
  let processed = 0
  loop
    .route('tick', () => 'pay', { rateLimit: { max: config.max, perMs: config.perMs, per: 'route' } })
    .on('pay', async () => {
      starts[processed++] = performance.now()
    })
  for (let i = 0; i < n; i++) loop.post('tick', i)
  await loop.drain()
  const what = `binding ${config.max}/${config.perMs} ms`
  expectEqual(`${what}: handler calls`, processed, n)
  const holds = loop.metrics().counters.rateLimited
  await loop.stop()
  const span = (starts[n - 1] as number) - (starts[0] as number)
  const seen = maxInWindow(starts, config.perMs)
  const sample = {
    config,
    configured: (config.max / config.perMs) * 1000,
    achieved: ((n - config.max) / span) * 1000,
    maxInWindow: seen,
    holds,
  }
  if (seen > config.max) {
    process.stderr.write(
      `!!! ${what}: ${seen} handler starts in one ${config.perMs} ms window, over max ${config.max}\n`,
    )
  }
  return sample
}
