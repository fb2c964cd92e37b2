/**
 * Every error Flowing throws or reports. Each has a stable {@link FlowingError.code} to branch on, a
 * `name` equal to its class name, and a message that names the offending value, the rule it broke and
 * the live numbers that matter.
 *
 * @module
 */
import { ArgumentError, argumentChecks, describeValue, FlowingError, isFlowingError } from '@flowing/errors'

/** Renders a value the way argument errors quote it: `` `0` (number) `` (shared by every Flowing package). */
/** The base class of every Flowing error, of every package (see `@flowing/errors`). */
/** Whether a value is a Flowing error of any package and any installed copy (never throws). */
/** The base of every package's argument error: `argument`, `rule`, `value`, `hint` (see `@flowing/errors`). */
export { ArgumentError, describeValue, FlowingError, isFlowingError }

/**
 * The stable codes of `@flowing/core`'s errors, one per error class.
 *
 * @group Errors
 */
export type FlowingErrorCode =
  | 'ERR_FLOWING_INVALID_ARGUMENT'
  | 'ERR_FLOWING_QUEUE_FULL'
  | 'ERR_FLOWING_UNKNOWN_MESSAGE_TYPE'
  | 'ERR_FLOWING_UNKNOWN_ROUTE'
  | 'ERR_FLOWING_DUPLICATE_HANDLER'
  | 'ERR_FLOWING_HOP_LIMIT'
  | 'ERR_FLOWING_LOOP_STOPPED'
  | 'ERR_FLOWING_SEND_TIMEOUT'
  | 'ERR_FLOWING_SEND_ABORTED'
  | 'ERR_FLOWING_LOOP_ABORTED'
  | 'ERR_FLOWING_DELAYED_FULL'
  | 'ERR_FLOWING_BACKPRESSURE'
  | 'ERR_FLOWING_CIRCUIT_OPEN'
  | 'ERR_FLOWING_NON_RETRYABLE'
  | 'ERR_FLOWING_RETRYABLE'
  | 'ERR_FLOWING_DUPLICATE'
  | 'ERR_FLOWING_SNAPSHOT'
  | 'ERR_FLOWING_STORE'
  | 'ERR_FLOWING_RATE_LIMITED'
  | 'ERR_FLOWING_CANCELLED'
  | 'ERR_FLOWING_REQUEST_FAILED'

/**
 * An argument or option broke its rule. Thrown synchronously, before anything changed. An
 * {@link ArgumentError}: `argument`, `rule`, `value` and `hint` are fields.
 *
 * @example
 * ```
 * Expected `capacity` to be a positive integer, got `0` (number)
 * Expected `options.capasity` to be one of the known options (capacity, workers, …), got `10` (number); did you mean `capacity`?
 * ```
 *
 * @group Errors
 */
export class InvalidArgumentError extends ArgumentError {
  /** The `code` of every `InvalidArgumentError`. */
  static override readonly code = 'ERR_FLOWING_INVALID_ARGUMENT'
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_INVALID_ARGUMENT'
}

/**
 * Rejects keys of `obj` outside `known`: a typo such as `capasity` must not be silently ignored. The
 * error names `<path>.<key>`, lists the known keys and, for a key within two edits of one of them,
 * suggests it. Here, beside the error it throws, so error constructors can check their own options;
 * `internal/validate.ts` re-exports it as `checkKnownKeys`.
 *
 * @param owner - whose options they are, for the rule (`one of <owner> options (…)`); `the known` by default
 * @throws InvalidArgumentError naming the first unknown key
 * @internal
 */
export function refuseUnknownKeys(
  path: string,
  obj: Record<string, unknown>,
  known: readonly string[],
  owner = 'the known',
): void {
  const wording = (names: readonly string[], near: string | undefined) => ({
    rule: `one of ${owner} options (${names.join(', ')})`,
    hint: near === undefined ? undefined : `did you mean \`${near}\`?`,
  })
  argumentChecks(InvalidArgumentError, wording).knownKeys(path, obj, known)
}

/**
 * Live queue numbers carried by overload errors and results.
 *
 * @group Errors
 */
export interface QueueLoad {
  /** Messages waiting (ready, parked behind a busy key, or unparked). */
  readonly queued: number
  /** The configured bound on waiting messages. */
  readonly capacity: number
  /** Handlers running now. */
  readonly running: number
  /** Producers blocked in `send()` waiting for space. */
  readonly waitingProducers: number
}

/**
 * The queue is at capacity and the overflow policy is `reject` (or `wait` for a synchronous `post`).
 *
 * @remarks Nothing was admitted. Retry later, use `send()` to wait for space, or choose another
 * overflow policy.
 *
 * @group Errors
 */
export class QueueFullError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_QUEUE_FULL'
  /** The live numbers at the moment of rejection. */
  readonly load: QueueLoad
  /** The message type that was refused. */
  readonly messageType: string

  /**
   * @param messageType - the refused message type
   * @param load - the live queue numbers
   */
  constructor(messageType: string, load: QueueLoad) {
    super(
      'ERR_FLOWING_QUEUE_FULL',
      `Queue is full: cannot admit \`${messageType}\` (${load.queued}/${load.capacity} queued, ${load.running} running, ${load.waitingProducers} producers waiting)`,
    )
    this.load = load
    this.messageType = messageType
  }
}

/**
 * A message type with no registered handler was posted. Nothing was admitted.
 *
 * @group Errors
 */
export class UnknownMessageTypeError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_UNKNOWN_MESSAGE_TYPE'
  /** The unknown type. */
  readonly messageType: string

  /**
   * @param messageType - the posted type
   * @param known - the registered types, listed in the message to spot typos
   */
  constructor(messageType: string, known: readonly string[]) {
    const list = known.length === 0 ? 'none' : known.map((t) => `\`${t}\``).join(', ')
    super(
      'ERR_FLOWING_UNKNOWN_MESSAGE_TYPE',
      `No handler registered for message type ${describeValue(messageType)}; registered types: ${list}`,
    )
    this.messageType = messageType
  }
}

/**
 * A routed type produced a route key that has neither a handler nor an `otherwise` fallback.
 *
 * @group Errors
 */
export class UnknownRouteError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_UNKNOWN_ROUTE'
  /** The routed message type. */
  readonly messageType: string
  /** The route key the selector produced. */
  readonly routeKey: unknown

  /**
   * @param messageType - the routed type
   * @param routeKey - the key the selector produced
   * @param known - the route keys that have handlers
   */
  constructor(messageType: string, routeKey: unknown, known: readonly string[]) {
    const list = known.length === 0 ? 'none' : known.map((k) => `\`${k}\``).join(', ')
    super(
      'ERR_FLOWING_UNKNOWN_ROUTE',
      `No handler for route ${describeValue(routeKey)} of message type \`${messageType}\` and no otherwise(); routes: ${list}`,
    )
    this.messageType = messageType
    this.routeKey = routeKey
  }
}

/**
 * A handler was registered twice for the same type or route without `{ replace: true }`.
 *
 * @group Errors
 */
export class DuplicateHandlerError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_DUPLICATE_HANDLER'
  /**
   * @param what - the type or `type › route` already taken
   */
  constructor(what: string) {
    super(
      'ERR_FLOWING_DUPLICATE_HANDLER',
      `A handler is already registered for ${what}; pass { replace: true } to replace it`,
    )
  }
}

/**
 * A follow-up chain (`ctx.post` inside a handler) grew deeper than `maxHops`: a self-amplifying
 * message storm is stopped at its source.
 *
 * @group Errors
 */
export class HopLimitError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_HOP_LIMIT'
  /** The depth the refused follow-up would have had. */
  readonly hops: number
  /** The configured limit. */
  readonly maxHops: number

  /**
   * @param messageType - the follow-up type refused
   * @param hops - the depth it would have had
   * @param maxHops - the configured limit
   */
  constructor(messageType: string, hops: number, maxHops: number) {
    super(
      'ERR_FLOWING_HOP_LIMIT',
      `Follow-up \`${messageType}\` would be ${hops} hops deep; the limit is maxHops = ${maxHops}`,
    )
    this.hops = hops
    this.maxHops = maxHops
  }
}

/**
 * An operation the loop's state forbids: a post after `stop()` was called (the loop is draining or
 * stopped), or `start()` / `pause()` on a stopped loop. Nothing was done.
 *
 * @group Errors
 */
export class LoopStoppedError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_LOOP_STOPPED'
  /** The loop state at the time. */
  readonly state: string

  /**
   * @param action - what was refused, e.g. "post `order.paid`"
   * @param state - the loop state at the time
   */
  constructor(action: string, state: string) {
    super('ERR_FLOWING_LOOP_STOPPED', `Cannot ${action}: the loop is ${state}`)
    this.state = state
  }
}

/**
 * A post while `stop()` drains the loop: admission stopped at once, what was accepted is being
 * finished (or will be handed back in the shutdown snapshot). A subclass of {@link LoopStoppedError}
 * (same code), so one `catch` covers both.
 *
 * @group Errors
 */
export class LoopStoppingError extends LoopStoppedError {
  /**
   * @param action - what was refused, e.g. "post `order.paid`"
   */
  constructor(action: string) {
    super(action, 'stopping')
  }
}

/**
 * A `send()` waited longer than its `waitTimeoutMs` for space. Nothing was admitted.
 *
 * @group Errors
 */
export class SendTimeoutError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_SEND_TIMEOUT'
  /** The timeout that elapsed (ms). */
  readonly timeoutMs: number
  /** The queue numbers when the producer gave up. */
  readonly load: QueueLoad

  /**
   * @param messageType - the type that waited
   * @param timeoutMs - the timeout that elapsed
   * @param load - the queue numbers when it gave up
   */
  constructor(messageType: string, timeoutMs: number, load: QueueLoad) {
    super(
      'ERR_FLOWING_SEND_TIMEOUT',
      `send(\`${messageType}\`) waited ${timeoutMs} ms for space and gave up (${load.queued}/${load.capacity} queued)`,
    )
    this.timeoutMs = timeoutMs
    this.load = load
  }
}

/**
 * A `send()` was aborted through its `signal` before space was found. Nothing was admitted.
 *
 * @group Errors
 */
export class SendAbortedError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_SEND_ABORTED'
  /**
   * @param messageType - the type that waited
   * @param reason - the signal's abort reason (kept as `cause`)
   */
  constructor(messageType: string, reason: unknown) {
    super('ERR_FLOWING_SEND_ABORTED', `send(\`${messageType}\`) was aborted while waiting for space`, {
      cause: reason,
    })
  }
}

/**
 * The abort reason handlers see on `ctx.signal` when the loop stops without draining.
 *
 * @group Errors
 */
export class LoopAbortedError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_LOOP_ABORTED'
  /** Creates the error; the message says the loop is stopping. */
  constructor() {
    super('ERR_FLOWING_LOOP_ABORTED', 'The loop is stopping: in-flight handlers are asked to abort')
  }
}

/**
 * `postDelayed` / `postAt` found `maxDelayed` messages already scheduled. Nothing was scheduled.
 *
 * @group Errors
 */
export class DelayedFullError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_DELAYED_FULL'
  /** Delayed messages pending (scheduled, or due and waiting for room). */
  readonly pending: number
  /** The configured bound. */
  readonly maxDelayed: number

  /**
   * @param messageType - the refused type
   * @param pending - delayed messages pending
   * @param maxDelayed - the configured bound
   */
  constructor(messageType: string, pending: number, maxDelayed: number) {
    super(
      'ERR_FLOWING_DELAYED_FULL',
      `Cannot schedule \`${messageType}\`: ${pending} delayed messages pending, maxDelayed = ${maxDelayed}`,
    )
    this.pending = pending
    this.maxDelayed = maxDelayed
  }
}

/**
 * Why backpressure refused a post.
 *
 * @group Backpressure
 */
export interface BackpressureState {
  /** The pressure level at the time. */
  readonly level: 'normal' | 'warn' | 'shed' | 'reject'
  /** `shed`: too little urgency for level `shed`; `reject`: level `reject`; `breaker`: the admission breaker is open. */
  readonly cause: 'shed' | 'reject' | 'breaker'
  /** Queue fill ratio (0–1) at the time. */
  readonly fill: number
  /** A hint: try again in about this many ms. */
  readonly retryAfterMs: number
  /** Posts with a priority number above this are shed at level `shed`. */
  readonly shedAbove: number
}

/**
 * Watermark backpressure refused a post: level `shed` (not urgent enough), level `reject`, or the
 * admission breaker is open. Nothing was admitted; retry after `retryAfterMs`, or raise the priority.
 *
 * @group Errors
 */
export class BackpressureError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_BACKPRESSURE'
  /** The pressure state that refused the post. */
  readonly pressure: BackpressureState
  /** The refused type. */
  readonly messageType: string

  /**
   * @param messageType - the refused type
   * @param priority - the refused post's priority
   * @param pressure - the pressure state
   */
  constructor(messageType: string, priority: number, pressure: BackpressureState) {
    const why =
      pressure.cause === 'shed'
        ? `priority ${priority} is above shedAbove = ${pressure.shedAbove} at level shed`
        : pressure.cause === 'reject'
          ? 'level reject refuses every post'
          : 'the admission breaker is open'
    super(
      'ERR_FLOWING_BACKPRESSURE',
      `Backpressure refused \`${messageType}\`: ${why} (queue ${Math.round(pressure.fill * 100)} % full); retry in ~${Math.ceil(pressure.retryAfterMs)} ms`,
    )
    this.pressure = pressure
    this.messageType = messageType
  }
}

/**
 * The type's handlers timed out too often in a row: its timeout breaker (the `timeoutBreaker` option)
 * is open and new posts of the type are refused until the cooldown ends (then one probe goes
 * through). Nothing was admitted. Its code is still `ERR_FLOWING_CIRCUIT_OPEN`, as under its old name.
 *
 * @group Errors
 */
export class TimeoutBreakerOpenError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_CIRCUIT_OPEN'
  /** The refused type. */
  readonly messageType: string
  /** Milliseconds until a probe is allowed. */
  readonly retryAfterMs: number

  /**
   * @param messageType - the refused type
   * @param retryAfterMs - ms until a probe is allowed
   */
  constructor(messageType: string, retryAfterMs: number) {
    super(
      'ERR_FLOWING_CIRCUIT_OPEN',
      `Cannot post \`${messageType}\`: its handlers kept timing out, the type's breaker is open; a probe is allowed in ~${Math.ceil(retryAfterMs)} ms`,
    )
    this.messageType = messageType
    this.retryAfterMs = retryAfterMs
  }
}

/**
 * The old name of {@link TimeoutBreakerOpenError} (the same class: `instanceof` holds for both).
 * @deprecated Use `TimeoutBreakerOpenError`: route circuit breakers hold messages, they never throw this.
 *
 * @group Errors
 */
export const CircuitOpenError = TimeoutBreakerOpenError
/**
 * @deprecated Use `TimeoutBreakerOpenError`.
 *
 * @group Errors
 */
export type CircuitOpenError = TimeoutBreakerOpenError

/**
 * Throw this (or a subclass) from a handler for a failure that no retry can fix — a declined card, a
 * payload that fails validation: the message goes to the dead-letter store at once, without burning
 * further attempts, and it does not count against the route's circuit breaker.
 *
 * @example
 * ```ts
 * if (!order.items.length) throw new NonRetryableError('order has no items')
 * ```
 *
 * @group Errors
 */
export class NonRetryableError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_NON_RETRYABLE'
  /**
   * @param message - what went wrong
   * @param options - standard `ErrorOptions` (`cause`)
   */
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_FLOWING_NON_RETRYABLE', message, options)
  }
}

/**
 * Throw this (or a subclass) from a handler for a transient failure — a timeout, a 503, a dropped
 * connection: it is retried up to the policy's `maxAttempts` (other unknown errors get only
 * `unknownMaxAttempts`). `HandlerTimeoutError` is retryable too.
 *
 * @group Errors
 */
export class RetryableError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_RETRYABLE'
  /**
   * @param message - what went wrong
   * @param options - standard `ErrorOptions` (`cause`)
   */
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_FLOWING_RETRYABLE', message, options)
  }
}

/**
 * A journaled message's attempts kept ending in a crash of the process (`kill -9`, an out-of-memory
 * kill, a native addon's fault, a `process.exit` deep in a library): it was interrupted `crashes`
 * times, reached `maxCrashes`, and was dead-lettered at its next start **without running again**, so
 * the messages behind it on its key run. Never retried, whatever a classifier says. Its dead letter
 * keeps the payload and the attempts that did finish, for `loop.deadLetters.replay()` once the cause
 * is fixed.
 *
 * @group Errors
 */
export class CrashLoopError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_CRASH_LOOP'
  /** The message's type. */
  readonly messageType: string
  /** Attempts of it that a crash interrupted. */
  readonly crashes: number
  /** The limit it reached (the type's `maxCrashes`, else the loop's). */
  readonly maxCrashes: number

  /**
   * @param messageType - the message's type
   * @param crashes - attempts a crash interrupted
   * @param maxCrashes - the limit in force
   */
  constructor(messageType: string, crashes: number, maxCrashes: number) {
    super(
      'ERR_FLOWING_CRASH_LOOP',
      `\`${messageType}\` was running when the process crashed ${crashes} times (maxCrashes ${maxCrashes}): ` +
        'dead-lettered without running again (a poison message: its handler kills the process)',
    )
    this.messageType = messageType
    this.crashes = crashes
    this.maxCrashes = maxCrashes
  }
}

/**
 * A post carried an idempotency key that is in flight or already done (or failed, under the
 * `failed: 'duplicate'` policy): nothing was admitted, nothing will run.
 *
 * @group Errors
 */
export class DuplicateMessageError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_DUPLICATE'
  /** The refused type. */
  readonly messageType: string
  /** The idempotency key. */
  readonly idempotencyKey: string
  /** What the ledger holds for it. */
  readonly ledgerState: string

  /**
   * @param messageType - the refused type
   * @param idempotencyKey - the key
   * @param ledgerState - the key's state in the ledger (`processing`, `committed`, `done`, `failed`)
   */
  constructor(messageType: string, idempotencyKey: string, ledgerState: string) {
    super(
      'ERR_FLOWING_DUPLICATE',
      `Duplicate \`${messageType}\`: idempotency key ${JSON.stringify(idempotencyKey)} is ${ledgerState}; nothing was admitted`,
    )
    this.messageType = messageType
    this.idempotencyKey = idempotencyKey
    this.ledgerState = ledgerState
  }
}

/**
 * `loop.restore()` was given something that is not a whole, valid snapshot of this format and
 * version — or that this loop cannot take (an unknown type, no room), or whose reading threw (a
 * getter, a Proxy trap, a route selector: the thrown value is the `cause`). Nothing was restored.
 *
 * @group Errors
 */
export class SnapshotError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_SNAPSHOT'
  /** Where in the snapshot the problem is, e.g. `messages[3].priority` (empty for the whole). */
  readonly path: string

  /**
   * @param path - where the problem is
   * @param problem - what is wrong
   * @param options - `cause`: what a getter, a Proxy trap, a route selector or a store threw
   */
  constructor(path: string, problem: string, options?: ErrorOptions) {
    super(
      'ERR_FLOWING_SNAPSHOT',
      `Cannot restore the snapshot: ${path === '' ? '' : `\`${path}\` `}${problem}; nothing was restored`,
      options,
    )
    this.path = path
  }
}

/**
 * What a journal store was doing when it failed.
 *
 * @group Errors
 */
export type StoreOperation = 'open' | 'recover' | 'commit' | 'close' | 'lease' | 'backup'

/**
 * A journal store failed: its file could not be opened or written (disk full, read-only, corrupt), its
 * connection was lost, or its lease was taken over by another process. The loop reports it as the
 * `store-error` event, keeps every message it accepted, refuses new posts with it until a commit
 * succeeds again, and rejects the `flushed()` promises the failed commit was to settle.
 *
 * @group Errors
 */
export class StoreError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_STORE'
  /** The store's name (`sqlite:/path/journal.db`, `postgres:host/db`). */
  readonly store: string
  /** What it was doing. */
  readonly operation: StoreOperation

  /**
   * @param store - the store's name
   * @param operation - what it was doing
   * @param problem - what went wrong, in words
   * @param cause - the underlying error, if any
   */
  constructor(store: string, operation: StoreOperation, problem: string, cause?: unknown) {
    super('ERR_FLOWING_STORE', `Journal store ${store} failed to ${operation}: ${problem}`, { cause })
    this.store = store
    this.operation = operation
  }
}

/**
 * Whose messages a downstream's "too many requests" holds back (`RateLimitError`'s `scope`):
 *
 * - `route`: every message of the route (type and route key) — one quota for everyone;
 * - `key`: only the messages with the refused message's key, on that route — a quota per tenant,
 *   per account (a keyless message holds its route back);
 * - `group`: only the messages of the refused message's key group, on that route (a message without
 *   a group holds its route back).
 *
 * @group Flow control
 * @category Rate limits
 */
export type RetryAfterScope = 'route' | 'key' | 'group'

/**
 * The options of {@link RateLimitError}; each checked when the error is made.
 *
 * @group Errors
 */
export interface RateLimitErrorOptions extends ErrorOptions {
  /**
   * How long the held-back messages wait before they run again (ms): a finite number, 0 or more —
   * take it from the `Retry-After` header.
   * @defaultValue 1000
   */
  readonly retryAfterMs?: number
  /**
   * Whose messages wait: the route's, or only the refused message's key's or group's on that route.
   * @defaultValue `'route'`
   */
  readonly scope?: RetryAfterScope
}

const RATE_LIMIT_ERROR_KEYS = ['retryAfterMs', 'scope', 'cause'] as const
const RETRY_AFTER_SCOPES: readonly RetryAfterScope[] = ['route', 'key', 'group']

/**
 * Throw this from a handler when a downstream says "too many requests" (an HTTP 429, a quota): the
 * message waits `retryAfterMs` and runs again **without consuming an attempt**, first in line, and
 * the messages of its `scope` pause for as long — by default its whole route (type and route key);
 * with `scope: 'key'` (`'group'`) only the messages of its key (key group) on that route — without
 * holding workers, while everything else flows on. Then they are throttled: one start a second at
 * first, doubling every 250 ms while messages wait, cut by 30 % at a further 429 (at most once a
 * second), gone after 10 s with nothing waiting. Counted in `retryAfters` and `rateLimited`, reported
 * by the `rate-limited` event (its `retryAfterScope` says which scope).
 *
 * The options are checked here: an unknown key (a typo such as `retryAfter`) or a wrong type throws
 * `InvalidArgumentError` instead — from a handler, the attempt then fails with that error, whose
 * message names the key and what it should be.
 *
 * @example
 * ```ts
 * loop.on('payment.charge', async (msg) => {
 *   const res = await fetch(url, { method: 'POST', body: JSON.stringify(msg.payload) })
 *   if (res.status === 429) throw new RateLimitError('provider quota', { retryAfterMs: 2_000 })
 * })
 * ```
 *
 * @example
 * ```ts
 * // A quota per tenant: a 429 for one tenant slows only that tenant's messages (their key).
 * loop.on('report.render', async (msg) => {
 *   const res = await fetch(`${api}/tenants/${msg.key}/render`, { method: 'POST' })
 *   if (res.status === 429) {
 *     throw new RateLimitError('tenant quota', { retryAfterMs: 30_000, scope: 'key' })
 *   }
 * })
 * ```
 *
 * @group Errors
 */
export class RateLimitError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_RATE_LIMITED'
  /** How long the held-back messages wait before they run again (ms). */
  readonly retryAfterMs: number
  /** Whose messages wait: the route's, or the refused message's key's or group's on that route. */
  readonly scope: RetryAfterScope

  /**
   * @param message - what the downstream said
   * @param options - `retryAfterMs`, `scope` and the standard `cause`
   * @throws InvalidArgumentError for an unknown option, a bad `retryAfterMs` or `scope`
   */
  constructor(message: string, options?: RateLimitErrorOptions) {
    const o = rateLimitOptions(options)
    super('ERR_FLOWING_RATE_LIMITED', message, 'cause' in o ? { cause: o['cause'] } : undefined)
    const after = o['retryAfterMs'] ?? 1000
    if (typeof after !== 'number' || !(after >= 0) || !Number.isFinite(after)) {
      throw new InvalidArgumentError('options.retryAfterMs', 'a finite number of ms, 0 or more', after)
    }
    const scope = o['scope'] ?? 'route'
    if (!(RETRY_AFTER_SCOPES as readonly unknown[]).includes(scope)) {
      throw new InvalidArgumentError('options.scope', "one of 'route', 'key', 'group'", scope)
    }
    this.retryAfterMs = after
    this.scope = scope as RetryAfterScope
  }
}

// RateLimitError's options, read once: an object with known keys only (a getter that throws is a bad option).
function rateLimitOptions(options: unknown): Record<string, unknown> {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('options', 'an object', options)
  }
  const o: Record<string, unknown> = {}
  let key = ''
  try {
    for (key of Object.keys(options)) o[key] = (options as Record<string, unknown>)[key]
  } catch (error) {
    throw new InvalidArgumentError(
      `options${key === '' ? '' : `.${key}`}`,
      'a readable option (reading it threw)',
      error,
      {
        cause: error,
      },
    )
  }
  refuseUnknownKeys('options', o, RATE_LIMIT_ERROR_KEYS, "RateLimitError's")
  return o
}

/**
 * The reason a cancelled message's running handler sees on `ctx.signal` (`loop.cancel(id)`, the
 * post's `signal`, a `request()` that gave up).
 *
 * @group Errors
 */
export class MessageCancelledError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_CANCELLED'
  /** The cancelled message's id. */
  readonly messageId: string

  /**
   * @param messageId - the message's id
   * @param why - what cancelled it
   */
  constructor(messageId: string, why: string, options?: ErrorOptions) {
    super('ERR_FLOWING_CANCELLED', `Message ${messageId} was cancelled (${why})`, options)
    this.messageId = messageId
  }
}

/**
 * Why a `request()` ended without the handler's value.
 *
 * @group Errors
 */
export type RequestOutcome = 'dead-lettered' | 'dropped' | 'cancelled' | 'snapshotted' | 'timed-out'

/**
 * `loop.request()` rejects with this when its message ended without success: `outcome` says how.
 * `cause` is the handler's last error for `dead-lettered` (only with the request option
 * `deadLetter: true`: by default a handler's failure rejects the request with the handler's own
 * error), the abort reason for `cancelled`. A refused post rejects with the post's own error instead
 * (`QueueFullError`, …).
 *
 * @group Errors
 */
export class RequestFailedError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_REQUEST_FAILED'
  /** How the message ended. */
  readonly outcome: RequestOutcome
  /** The message's id. */
  readonly messageId: string
  /** The message's type. */
  readonly messageType: string

  /**
   * @param outcome - how the message ended
   * @param messageType - its type
   * @param messageId - its id
   * @param detail - more on why (a reason, a duration)
   */
  constructor(outcome: RequestOutcome, messageType: string, messageId: string, detail: string, options?: ErrorOptions) {
    super('ERR_FLOWING_REQUEST_FAILED', `Request \`${messageType}\` ${messageId} ${outcome}: ${detail}`, options)
    this.outcome = outcome
    this.messageId = messageId
    this.messageType = messageType
  }
}
