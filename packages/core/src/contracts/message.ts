/**
 * The message model: the message map, the envelope a handler receives, the options of `post`.
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'
import type { JobPostOptions } from './jobs.js'
import type { PriorityLevel } from './priority.js'
import type { RetryOptions } from './retry.js'

/**
 * The user-declared map from message type to payload type. Declare an interface and pass it to
 * `createLoop<Messages>()`; posting an unknown type or a wrong payload is then a compile error.
 *
 * @example
 * ```ts
 * interface Messages {
 *   'order.paid': { orderId: string; amount: number }
 *   'order.updated': { orderId: string; status: 'paid' | 'refunded' | 'pending' }
 * }
 * ```
 *
 * @group Messages
 * @category Messages
 */
export type MessageMap = object

/**
 * The message types of a map, as strings.
 *
 * @group Messages
 * @category Messages
 */
export type MessageType<M extends MessageMap> = Extract<keyof M, string>

/**
 * A partition key: messages with the same key never run at the same time and start in post order.
 *
 * @group Messages
 * @category Messages
 */
export type MessageKey = string | number

/**
 * A message as handlers, events and results see it. Read-only.
 *
 * @typeParam M - the message map
 * @typeParam T - the message type
 *
 * @group Messages
 * @category Messages
 */
export interface Message<M extends MessageMap = MessageMap, T extends MessageType<M> = MessageType<M>> {
  /** Unique id: a per-loop nanoid prefix and a sequence number, e.g. `V1StGXR8_Z:1a`. */
  readonly id: string
  /** The message type. */
  readonly type: T
  /** The typed payload. */
  readonly payload: M[T]
  /** The partition key, or `undefined` for keyless messages (they may run anywhere). */
  readonly key: MessageKey | undefined
  /** Priority 0 (most urgent) – 9. */
  readonly priority: PriorityLevel
  /** The route key chosen by the type's router, if it has one. */
  readonly routeKey: string | undefined
  /** Clock time (ms) when the message entered the queue (a delayed message enters when it becomes due). */
  readonly postedAt: number
  /** Post order within the loop: the tiebreak among equal urgency. */
  readonly seq: number
  /** Shared by a root message and every follow-up it causes (`ctx.post`): its root's id. */
  readonly traceId: string
  /** Follow-up depth: 0 for messages posted from outside a handler. */
  readonly hops: number
  /**
   * Its headers: a small map of strings (trace context, correlation ids) that travels with the message
   * through retries, dead letters, snapshots, journals and its follow-ups. Frozen; empty when none.
   */
  readonly headers: MessageHeaders
}

/**
 * Message headers: names are HTTP tokens (letters, digits and ``!#$%&'*+-.^_|~`` or a backtick, at
 * most 256 characters; lowercase travels best between transports), values strings without line
 * breaks or NUL (at most 8192 characters), at most 64 per message.
 *
 * @group Messages
 * @category Headers
 */
export type MessageHeaders = Readonly<Record<string, string>>

/**
 * Adds headers to every message a loop admits, e.g. the active trace context. Registered with
 * `loop.stamp(stamper)`; called synchronously at each post — from outside and from a handler's
 * `ctx.post`, in the poster's own async context — with the type and the headers the message would
 * otherwise have (its parent's, overridden by the post's). What it returns is merged over them;
 * `undefined` adds nothing. A stamper that throws, or returns something that is not a headers map,
 * refuses the post with its error, nothing admitted.
 *
 * @param type - the message type being posted
 * @param headers - the headers so far (frozen)
 * @returns headers to add (or replace), or `undefined`
 *
 * @group Messages
 * @category Headers
 */
export type HeaderStamper = (type: string, headers: MessageHeaders) => MessageHeaders | undefined

/**
 * What happens when a post finds the queue full.
 *
 * @group Messages
 * @category Posting
 */
export type OverflowPolicy = 'reject' | 'drop-new' | 'drop-oldest-lowest' | 'wait'

/**
 * Options of one post.
 *
 * @group Messages
 * @category Posting
 */
export interface PostOptions extends JobPostOptions {
  /**
   * Partition key: messages with the same key run one at a time, in post order among equal priority.
   * Omit for messages that may run on any worker concurrently.
   */
  readonly key?: MessageKey | undefined
  /**
   * Urgency, an integer from 0 (most urgent) to 9.
   * @defaultValue `Priority.normal` (5), or the loop's `defaultPriority`
   */
  readonly priority?: PriorityLevel | undefined
  /**
   * Overrides the loop's overflow policy for this post.
   * @defaultValue the loop's `overflow` option
   */
  readonly overflow?: OverflowPolicy | undefined
  /**
   * Handler deadline for this message (ms, > 0 or `Infinity`), overriding the type's and the loop's
   * `timeoutMs`. `Infinity` guards nothing: the type's `heartbeatMs` is not checked either.
   */
  readonly handlerTimeoutMs?: number | undefined
  /** Retry policy for this message, over its type's and the loop's (fields it omits come from them). */
  readonly retry?: RetryOptions | undefined
  /**
   * Idempotency key: while a message with this key is in flight or done (within the ledger's TTL), a
   * post with the same key is refused as a duplicate (`DuplicateMessageError`, result `duplicate`) and
   * nothing runs.
   */
  readonly idempotencyKey?: string | undefined
  /**
   * Headers of the message (see {@link MessageHeaders}). A follow-up (`ctx.post`) inherits its
   * parent's; the ones given here override them by name. The map is copied: later changes to it do
   * not reach the message.
   */
  readonly headers?: MessageHeaders | undefined
  /**
   * Key group: at most the group's concurrency (the loop's `groups` option; 1 unless set) of its
   * messages run at once, FIFO among equal priority, under the group's rate limits. Independent of
   * `key`: a message may have both (per-key order inside a tenant's share, say).
   */
  readonly group?: string | undefined
  /**
   * Cancels the message when aborted: one still waiting (queued, parked, held, rate-limited, delayed,
   * backing off) ends with outcome `cancelled`; a running one gets its `ctx.signal` aborted (its
   * handler decides). With `send()`, an abort while it still waits for space rejects the send with
   * `SendAbortedError` (nothing admitted). An already aborted signal refuses the post the same way.
   */
  readonly signal?: AbortSignalLike | undefined
}

/**
 * Options of {@link PostOptions} plus waiting controls, for `send()`.
 *
 * @group Messages
 * @category Posting
 */
export interface SendOptions extends PostOptions {
  /** Gives up waiting for space after this many ms (rejects with `SendTimeoutError`). */
  readonly waitTimeoutMs?: number | undefined
  /**
   * The old name of `waitTimeoutMs` (same meaning; a `DeprecationWarning` once per process).
   * @deprecated Use `waitTimeoutMs`: `timeoutMs` names the handler deadline everywhere else.
   */
  readonly timeoutMs?: number | undefined
}

/**
 * Options of `loop.request()`: those of a post, how long to wait for the outcome, and who gets a
 * failure. `undefined` is the same as absent for every option.
 *
 * @group Messages
 * @category Cancel and request
 */
export interface RequestOptions extends PostOptions {
  /**
   * Gives up after this many ms (rejects with `RequestFailedError`, outcome `timed-out`; the message
   * is cancelled). A positive finite number; anything else refuses the request with
   * `InvalidArgumentError` (counted in `rejected`, nothing admitted).
   * @defaultValue undefined (no time limit)
   */
  readonly waitTimeoutMs?: number | undefined
  /**
   * Also dead-letter the message when its handler fails for good. By default a request's failure
   * belongs to its caller: the promise rejects with the handler's own error and the message ends
   * with the outcome `request-failed` — no dead letter, no alert, no `dead-lettered` event, no dead
   * letter in the journal. With `true` it ends `dead-lettered` as a post's would (the sink, alerts,
   * replay), and the promise rejects with `RequestFailedError` (`outcome: 'dead-lettered'`, `cause`:
   * the handler's last error).
   * @defaultValue false
   * @example
   * ```ts
   * // An audited payment: the caller sees the error, and the letter stays for replay.
   * await loop.request('payment.capture', { orderId }, { deadLetter: true })
   * ```
   */
  readonly deadLetter?: boolean | undefined
}

/**
 * What the handler of each message type returns — the value `loop.request(type, …)` resolves with —
 * declared beside the message map and passed as `createLoop`'s second type parameter. Each handler of
 * a declared type must then return (or resolve to) its result, and a request of it is typed with it.
 * A type left out returns anything (`unknown`), as with no results map at all: declaring one result
 * never breaks another type's handlers or requests.
 *
 * @typeParam M - the message map
 *
 * @example
 * ```ts
 * interface Messages { resize: { width: number; height: number }; log: string }
 * interface Results { resize: { area: number } }
 * const loop = createLoop<Messages, Results>()
 * loop.on('resize', (msg) => ({ area: msg.payload.width * msg.payload.height }))
 * loop.on('log', (msg) => console.log(msg.payload))
 * const { area } = await loop.request('resize', { width: 2, height: 3 }) // area: number
 * await loop.stop()
 * ```
 *
 * @group Messages
 * @category Cancel and request
 */
export type ResultMap<M extends MessageMap> = { readonly [T in MessageType<M>]?: unknown }

/**
 * The results map of a loop made without one: every handler may return anything, every request
 * resolves to `unknown`. (It is `{}`, the one object type TypeScript drops from an intersection, so
 * that {@link ResultOf} stays `unknown` also in code generic over the message map.)
 *
 * @group Messages
 * @category Cancel and request
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is what keeps ResultOf resolvable for a generic map (see above)
export type NoResults = {}

/**
 * The result of message type `T` under a results map `R`: `R[T]`, or `unknown` when `R` does not
 * declare one (see {@link ResultMap}).
 *
 * @group Messages
 * @category Cancel and request
 */
export type ResultOf<R, T extends PropertyKey> = (R & { readonly [K in T]?: unknown })[T]

/**
 * `tryPost` result: the message was admitted.
 *
 * @group Messages
 * @category Posting
 */
export interface PostQueued<M extends MessageMap, T extends MessageType<M>> {
  /** Admitted and queued. */
  readonly ok: true
  /** Always `queued`. */
  readonly status: 'queued'
  /** The admitted message. */
  readonly message: Message<M, T>
}

/**
 * `tryPost` result: admitted, then dropped at once by the `drop-new` policy (a `dropped` event fired).
 *
 * @group Messages
 * @category Posting
 */
export interface PostDropped<M extends MessageMap, T extends MessageType<M>> {
  /** Not queued. */
  readonly ok: false
  /** Always `dropped`. */
  readonly status: 'dropped'
  /** The dropped message (its outcome is `dropped`). */
  readonly message: Message<M, T>
}

/**
 * `tryPost` result: refused; nothing was admitted.
 *
 * @group Messages
 * @category Posting
 */
export interface PostRefused {
  /** Not admitted. */
  readonly ok: false
  /**
   * `full`: the queue is at capacity; `stopped`: `stop()` was called; `shed` / `reject`: watermark
   * backpressure refused it (level shed and not urgent enough / level reject or breaker open);
   * `duplicate`: its idempotency key is in flight or done; `not-durable`: the loop's journal store
   * cannot take it now (its last commit failed, or `start()` has not recovered the journal yet).
   */
  readonly status: 'full' | 'stopped' | 'shed' | 'reject' | 'duplicate' | 'not-durable'
  /**
   * The error `post` would have thrown (`QueueFullError`, `LoopStoppedError`, `BackpressureError`,
   * `DuplicateMessageError` or `StoreError`).
   */
  readonly error: Error
}

/**
 * The result of `tryPost`, which never throws for overload or lifecycle reasons.
 *
 * @group Messages
 * @category Posting
 */
export type PostResult<M extends MessageMap, T extends MessageType<M>> =
  | PostQueued<M, T>
  | PostDropped<M, T>
  | PostRefused
