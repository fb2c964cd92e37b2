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
export { type AbortSignalLike, FencedError, HandlerTimeoutError, type MinimalAbortSignal } from '@flowing/watchdog'
export type { BackpressureOptions } from './admission/pressure.js'
export { stampHeaders } from './admission/stamping.js'
export { type Clock, systemClock, type TimerHandle, VirtualClock, wallNow } from './clock.js'
export type { Handler, HandlerContext, Middleware, RegisterOptions, RouteOptions } from './dispatcher/handler.js'
export type { Router } from './dispatcher/router.js'
export type { CancelResult } from './engine/cancels.js'
export type { FinishedSummary, MessageLogger, MessageLogLine, Outcome } from './engine/finished.js'
export {
  BackpressureError,
  type BackpressureState,
  CircuitOpenError,
  DelayedFullError,
  DuplicateHandlerError,
  DuplicateMessageError,
  describeValue,
  FlowingError,
  type FlowingErrorCode,
  HopLimitError,
  InvalidArgumentError,
  isFlowingError,
  LoopAbortedError,
  LoopStoppedError,
  LoopStoppingError,
  MessageCancelledError,
  NonRetryableError,
  QueueFullError,
  type QueueLoad,
  RateLimitError,
  RequestFailedError,
  type RequestOutcome,
  RetryableError,
  SendAbortedError,
  SendTimeoutError,
  SnapshotError,
  StoreError,
  type StoreOperation,
  TimeoutBreakerOpenError,
  UnknownMessageTypeError,
  UnknownRouteError,
} from './errors.js'
export type { AlertOptions, DeadLetterAlert, SignatureCount } from './failure/alerts.js'
export {
  type CircuitBreakerOptions,
  type CircuitChange,
  type CircuitPolicy,
  type CircuitState,
  DEFAULT_CIRCUIT,
} from './failure/circuits.js'
export {
  type Classifier,
  defaultClassify,
  type ErrorCause,
  type ErrorClass,
  type ErrorInfo,
  errorSignature,
} from './failure/classify.js'
export {
  type DeadLetter,
  type DeadLetterFilter,
  type DeadLetterSink,
  DeadLetterStore,
  type Replayer,
  type ReplayReport,
} from './failure/dead-letters.js'
export type {
  AttemptFailure,
  FailureExitOptions,
  FailureExitReport,
  FailureLogger,
  RetryScheduled,
} from './failure/failure-types.js'
export {
  backoff,
  DEFAULT_RETRY,
  type JitterStrategy,
  type RetryOptions,
  type RetryPolicy,
} from './failure/retry-policy.js'
export {
  type AttemptRecord,
  MAX_TRANSITIONS,
  type MessageState,
  type MessageTrace,
  type Transition,
} from './failure/trace.js'
export { checkHeaders, MAX_HEADER_NAME, MAX_HEADER_VALUE, MAX_HEADERS, mergeHeaders, NO_HEADERS } from './headers.js'
export type { IdempotencyOptions } from './idempotency/ledger.js'
export {
  type IdempotencyStore,
  type LedgerEntry,
  type LedgerState,
  MemoryIdempotencyStore,
} from './idempotency/store.js'
export { MemoryStore } from './journal/memory-store.js'
export type {
  JournalBatch,
  JournalRecord,
  JournalState,
  JournalStats,
  KeyRecord,
  Store,
  StoreContents,
} from './journal/store.js'
export type { GateChange } from './limits/dispatch-gate.js'
export type {
  FlowControlOptions,
  GroupLimits,
  GroupOptions,
  ResourceGate,
  TimeLimitOptions,
} from './limits/flow-options.js'
export type { RateLimit, RateLimitScope } from './limits/rate-limit.js'
export type { RateLimitHold } from './limits/rate-limits.js'
export { createLoop } from './loop/create-loop.js'
export {
  type DropReason,
  LoopEmitter,
  type LoopEvents,
  type LoopState,
  type TimeLimitReport,
  type ZombieSummary,
} from './loop/events.js'
export { Loop } from './loop/loop.js'
export { type LoopOptions, OVERFLOW_POLICIES } from './loop/options.js'
export type { StallOptions } from './loop/stall-option.js'
export type {
  HeaderStamper,
  Message,
  MessageHeaders,
  MessageKey,
  MessageMap,
  MessageType,
  NoResults,
  OverflowPolicy,
  PostDropped,
  PostOptions,
  PostQueued,
  PostRefused,
  PostResult,
  RequestOptions,
  ResultMap,
  ResultOf,
  SendOptions,
} from './message.js'
export { Histogram, type HistogramSnapshot } from './metrics/histogram.js'
export type { LoopCounters, LoopGauges, MetricsSnapshot } from './metrics/loop-metrics.js'
export type { AutoscaleOptions } from './pool/autoscale-options.js'
export type { WorkersChange, WorkersChangeReason } from './pool/autoscaler.js'
export type { BreakerChange } from './pool/timeout-breakers.js'
export { MAX_PRIORITY, MIN_PRIORITY, Priority, type PriorityLevel } from './priority.js'
export {
  installShutdownHandlers,
  type ProcessSignal,
  type ShutdownHandlerOptions,
  type SignalSource,
  type Stoppable,
} from './shutdown/install.js'
export {
  checkSnapshot,
  type LoopSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type SnapshotMessage,
  type SnapshotState,
} from './shutdown/snapshot.js'
export type { StopOptions } from './shutdown/stopper.js'
export type { DelayedMessage } from './timers/delayed-posts.js'
