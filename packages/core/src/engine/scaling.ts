/**
 * The engine's wiring of the worker autoscaler, and `loop.resize()` beside it: the one place the
 * pool's size changes from outside the pool.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { WorkersChange } from '../contracts/pool.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'
import type { LoopMetrics } from '../metrics/loop-metrics.js'
import type { AttemptContext } from '../pool/attempt-context.js'
import type { Attempts } from '../pool/attempts.js'
import { Autoscaler } from '../pool/autoscaler.js'
import { WorkerPool } from '../pool/worker-pool.js'

/** What the autoscaler samples and moves. */
export interface AutoscaleParts<M extends MessageMap> {
  readonly options: Pick<ResolvedLoopOptions, 'autoscale'>
  // The releasable clock: the sampling timer is released with the loop's others at stop.
  readonly lingering: Clock
  readonly queue: { readonly length: number }
  readonly pool: { readonly running: number; readonly size: number; resize(size: number): void }
  readonly metrics: Pick<LoopMetrics, 'succeeded' | 'failed'>
  readonly lifecycle: Pick<Lifecycle, 'state'>
  readonly events: LoopEmitter<M>
}

/** What a manual resize reads and moves. */
export interface ResizeParts<M extends MessageMap> {
  readonly autoscaler: Pick<Autoscaler, 'stop'> | undefined
  readonly pool: { readonly running: number; readonly size: number; resize(size: number): void }
  readonly queue: { readonly length: number }
  readonly clock: Clock
  readonly events: LoopEmitter<M>
}

/** The worker pool: its clock lets go of the process at stop (the saturation check's timer). */
export function newPool<M extends MessageMap>(e: {
  readonly options: ResolvedLoopOptions
  readonly attempts: Attempts<M>
  readonly lingering: Clock
}): WorkerPool<AttemptContext<M>> {
  const o = e.options
  // Saturation (every worker stuck while work waits) is always watched: the stall threshold.
  const saturatedMs = (typeof o.stall === 'object' ? o.stall.noProgressMs : undefined) ?? 30_000
  return new WorkerPool(
    e.attempts,
    e.lingering,
    o.workers,
    o.dispatchBudget,
    o.dispatchBudgetMs,
    o.maxZombies,
    saturatedMs,
  )
}

/** The autoscaler of `workers: { min, max }`, sampling already; undefined for a fixed count. */
export function newAutoscaler<M extends MessageMap>(e: AutoscaleParts<M>): Autoscaler | undefined {
  const range = e.options.autoscale
  if (range === undefined) return undefined
  const scaler = new Autoscaler(range, e.lingering, {
    backlog: () => e.queue.length,
    running: () => e.pool.running,
    size: () => e.pool.size,
    completed: () => e.metrics.succeeded + e.metrics.failed,
    active: () => e.lifecycle.state !== 'stopped',
    resize: (n) => e.pool.resize(n),
    changed: (change) => e.events.emit('workers', change),
  })
  scaler.start()
  return scaler
}

/** `loop.resize(n)`: the user takes over (the autoscaler stops for good); a change emits `workers`. */
export function resizeByHand<M extends MessageMap>(e: ResizeParts<M>, workers: number): void {
  e.autoscaler?.stop()
  const from = e.pool.size
  e.pool.resize(workers)
  if (from === workers) return
  const change: WorkersChange = {
    from,
    to: workers,
    reason: 'manual',
    at: e.clock.now(),
    backlog: e.queue.length,
    running: e.pool.running,
    throughput: Number.NaN,
    utilization: Number.NaN,
  }
  e.events.emit('workers', change)
}
