/**
 * Section 5 — a downstream that answers 429: a simulated provider accepting at most `limit` calls
 * in any second (a sliding window) and throwing `RateLimitError` above it, called by an unlimited
 * route with a standing backlog. The route's throttle (slow start, cuts at 429s, additive growth)
 * has to find the provider's rate on its own: the accepted rate in the second half of the run against
 * the provider's limit, and how many calls were refused per accepted one.
 *
 * @module
 */
import { createLoop, RateLimitError } from '@flowing/core'
import type { BenchMessages } from '../lib/flowing.js'
import { maxInWindow } from './binding.js'
import { WORKERS } from './limiter-cost.js'

/** What one run against the provider saw. */
export interface DownstreamSample {
  /** The provider's limit (calls per second). */
  readonly limit: number
  readonly seconds: number
  /** Calls accepted per second over the second half of the run. */
  readonly achieved: number
  /** Calls refused (429) per accepted call, over the second half. */
  readonly refusedPerAccepted: number
  /** Most calls accepted in any second (never above `limit`: the provider's own check). */
  readonly accepted: number
}

/** The provider's limits (calls a second). */
export const DOWNSTREAM_LIMITS: readonly number[] = [200, 2_000]

/** Runs the route against a provider of `limit` calls a second for `seconds`. */
export async function runDownstream(limit: number, seconds: number): Promise<DownstreamSample> {
  const backlog = Math.ceil(limit * seconds * 1.5) + 1000
  const loop = createLoop<BenchMessages>({ capacity: backlog, workers: WORKERS })
  const accepted: number[] = []
  let oldest = 0
  let refusedLate = 0
  const start = performance.now()
  const half = start + (seconds * 1000) / 2
  loop.on('tick', async () => {
    const now = performance.now()
    while (oldest < accepted.length && (accepted[oldest] as number) <= now - 1000) oldest++
    if (accepted.length - oldest >= limit) {
      if (now >= half) refusedLate++
      throw new RateLimitError('429', { retryAfterMs: 100 })
    }
    accepted.push(now)
  })
  for (let i = 0; i < backlog; i++) loop.post('tick', i)
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  await loop.stop({ drain: false })
  const late = accepted.filter((t) => t >= half).length
  return {
    limit,
    seconds,
    achieved: late / (seconds / 2),
    refusedPerAccepted: refusedLate / Math.max(1, late),
    accepted: maxInWindow(Float64Array.from(accepted), 1000),
  }
}
