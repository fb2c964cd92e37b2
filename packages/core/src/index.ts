/**
 * **@flowing/core** — the Flowing message loop: producers → bounded priority queue (priority, post-order
 * tiebreak, linear aging) → dispatcher (type → route key → handler chain) → partitioned worker pool
 * (one key on one worker at a time, per-key order kept).
 *
 * @example
 * ```ts
 * import { createLoop } from '@flowing/core'
 *
 * interface Messages { 'order.paid': { orderId: string; amount: number } }
 * const loop = createLoop<Messages>({ capacity: 10_000, workers: 8 })
 * loop.on('order.paid', async (msg) => console.log(msg.payload.orderId))
 * loop.post('order.paid', { orderId: 'o-1', amount: 42 }, { key: 'o-1' })
 * await loop.stop()
 * ```
 *
 * @packageDocumentation
 * @module @flowing/core
 */

export type { PressureLevel, PressureTransition, WatermarkStats } from '@flowing/backpressure'
export { FencedError, HandlerTimeoutError } from '@flowing/watchdog'
export { type Clock, systemClock, type TimerHandle, VirtualClock } from './clock.js'
export type { Handler, HandlerContext, Middleware, RegisterOptions } from './dispatcher/handler.js'
export { Router } from './dispatcher/router.js'
export {
  BackpressureError,
  type BackpressureState,
  CircuitOpenError,
  DelayedFullError,
  DuplicateHandlerError,
  describeValue,
  FlowingError,
  type FlowingErrorCode,
  HopLimitError,
  InvalidArgumentError,
  LoopAbortedError,
  LoopStoppedError,
  QueueFullError,
  type QueueLoad,
  SendAbortedError,
  SendTimeoutError,
  UnknownMessageTypeError,
  UnknownRouteError,
} from './errors.js'
export { DelayedMessage } from './loop/delayed-posts.js'
export { type DropReason, LoopEmitter, type LoopEvents, type LoopState, type ZombieSummary } from './loop/events.js'
export { createLoop, Loop, type StopOptions } from './loop/loop.js'
export { type LoopOptions, OVERFLOW_POLICIES } from './loop/options.js'
export type { BackpressureOptions } from './loop/pressure.js'
export type { BreakerChange } from './loop/timeout-breakers.js'
export type {
  Message,
  MessageKey,
  MessageMap,
  MessageType,
  OverflowPolicy,
  PostDropped,
  PostOptions,
  PostQueued,
  PostRefused,
  PostResult,
  SendOptions,
} from './message.js'
export { Histogram, type HistogramSnapshot } from './metrics/histogram.js'
export type { LoopCounters, LoopGauges, MetricsSnapshot } from './metrics/loop-metrics.js'
export { MAX_PRIORITY, MIN_PRIORITY, Priority, type PriorityLevel } from './priority.js'
