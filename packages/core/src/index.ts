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
export { refusedPressure } from './admission/pressure.js'
export { type RefusalStatus, refusalStatusOf } from './admission/refusal.js'
export { stampHeaders } from './admission/stamping.js'
export { systemClock, VirtualClock, wallNow } from './clock.js'
export type { Clock, TimerHandle } from './contracts/clock.js'
export type { DropReason, LoopEvents, LoopState, TimeLimitReport, ZombieSummary } from './contracts/events.js'
export type {
  AlertOptions,
  AttemptFailure,
  AttemptRecord,
  CircuitBreakerOptions,
  CircuitChange,
  CircuitPolicy,
  CircuitState,
  Classifier,
  DeadLetter,
  DeadLetterAlert,
  DeadLetterSink,
  ErrorCause,
  ErrorClass,
  ErrorInfo,
  FailureExitReport,
  FailureLogger,
  RetryScheduled,
  SignatureCount,
} from './contracts/failures.js'
export type {
  FlowControlOptions,
  GateChange,
  GroupLimits,
  GroupOptions,
  RateLimit,
  RateLimitHold,
  RateLimitScope,
  ResourceGate,
  TimeLimitOptions,
} from './contracts/flow.js'
export type { IdempotencyOptions, IdempotencyStore, LedgerEntry, LedgerState } from './contracts/idempotency.js'
export type {
  GroupLoad,
  InspectOptions,
  KeyHolder,
  KeyLane,
  LimitLoad,
  LoopInspection,
  RunningMessage,
} from './contracts/inspection.js'
export type { JobCancelResult, JobInfo, JobKeyMode, JobPostOptions, JobState, KeyedJob } from './contracts/jobs.js'
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
} from './contracts/message.js'
export type { HistogramSnapshot } from './contracts/metrics.js'
export type { BackpressureOptions, FailureExitOptions, LoopOptions, StallOptions } from './contracts/options.js'
export type { FinishedSummary, MessageLogger, MessageLogLine, Outcome } from './contracts/outcomes.js'
export type { AutoscaleOptions, BreakerChange, WorkersChange, WorkersChangeReason } from './contracts/pool.js'
export { MAX_PRIORITY, MIN_PRIORITY, Priority, type PriorityLevel } from './contracts/priority.js'
export type { JitterStrategy, RetryOptions } from './contracts/retry.js'
export type {
  MissedFires,
  ScheduleInfo,
  ScheduleOptions,
  ScheduleSpec,
  ScheduleState,
} from './contracts/schedules.js'
export {
  type LoopSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type SnapshotMessage,
  type SnapshotState,
} from './contracts/snapshot.js'
export type { StopOptions } from './contracts/stop.js'
export type {
  DurabilityOptions,
  JournalBatch,
  JournalRecord,
  JournalState,
  JournalStats,
  KeyRecord,
  Store,
  StoreContents,
} from './contracts/store.js'
export { MAX_TRANSITIONS, type MessageState, type MessageTrace, type Transition } from './contracts/traces.js'
export type { Handler, HandlerContext, Middleware, RegisterOptions, RouteOptions } from './dispatcher/handler.js'
export type { Router } from './dispatcher/router.js'
export {
  ArgumentError,
  BackpressureError,
  type BackpressureState,
  CircuitOpenError,
  CrashLoopError,
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
  type RateLimitErrorOptions,
  RequestFailedError,
  type RequestOutcome,
  type RetryAfterScope,
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
export { DEFAULT_CIRCUIT } from './failure/circuit-policy.js'
export { defaultClassify, errorInfo, errorSignature } from './failure/classify.js'
export { type DeadLetterSubject, deadLetterOf } from './failure/dead-letter-of.js'
export { type DeadLetterFilter, DeadLetterStore, type Replayer, type ReplayReport } from './failure/dead-letters.js'
export { backoff, DEFAULT_RETRY, type RetryPolicy } from './failure/retry-policy.js'
export { checkHeaders, MAX_HEADER_NAME, MAX_HEADER_VALUE, MAX_HEADERS, mergeHeaders, NO_HEADERS } from './headers.js'
export { MemoryIdempotencyStore } from './idempotency/store.js'
export { LoopEmitter } from './internal/loop-emitter.js'
export { type Definition as ScheduleDefinition, defineSchedule, sameDefinition } from './jobs/schedule-definition.js'
export { missedFires, nextFire } from './jobs/schedule-spec.js'
export { MemoryStore } from './journal/memory-store.js'
export { LoopControls } from './loop/controls.js'
export { createLoop } from './loop/create-loop.js'
export { JobKeys } from './loop/jobs.js'
export { Loop } from './loop/loop.js'
export { Schedules } from './loop/schedules.js'
export { Histogram } from './metrics/histogram.js'
export type { LoopCounters, LoopGauges, MetricsSnapshot } from './metrics/loop-metrics.js'
export { OVERFLOW_POLICIES } from './options/resolve.js'
export type { CancelResult } from './requests/cancels.js'
export {
  installShutdownHandlers,
  type ProcessSignal,
  type ShutdownHandlerOptions,
  type SignalSource,
  type Stoppable,
} from './shutdown/install.js'
export { checkSnapshot } from './shutdown/snapshot.js'
export type { DelayedMessage } from './timers/delayed-posts.js'
