/**
 * The interface the transport contract runs against: what both the in-process loop (`@flowing/core`)
 * and the distributed one (`@flowing/nats`) can do, made async so one suite fits both. A "process" is
 * one instance; {@link TransportUnderTest.restart} opens another on the same durable state (the core
 * loop's journal store, the NATS loop's streams).
 */

/** The messages of the contract. `p`: the producer that posted it (concurrent cases). */
export interface ContractMessages {
  step: { key: string; n: number; p?: number }
}

/** Every type of {@link ContractMessages} (adapters register a handler for each up front). */
export const CONTRACT_TYPES = ['step'] as const satisfies readonly (keyof ContractMessages)[]

/** What a handler is given. */
export interface Delivered<P> {
  /** The id its post returned, as the handler can read it (a root message's trace id): stable across deliveries. */
  readonly id: string
  readonly payload: P
  /** 1 for a first attempt, 2 for its first retry… */
  readonly attempt: number
}

/** A handler: throws `RetryableError` / `NonRetryableError` (from `@flowing/core`) to fail. */
export type TransportHandler<P> = (message: Delivered<P>) => void | Promise<void>

/** Post options the contract uses. */
export interface TransportPostOptions {
  readonly key?: string
  readonly idempotencyKey?: string
}

/**
 * What a post did: stored (with the id its handler will see), or refused as a duplicate of an
 * idempotency key seen before.
 */
export type PostOutcome = { readonly outcome: 'accepted'; readonly id: string } | { readonly outcome: 'duplicate' }

/** What an implementation can be asked to do beyond the common core; a case needing more is N/A. */
export interface TransportCapabilities {
  /** Several live processes share one consumer group ({@link TransportUnderTest.peer}). */
  readonly crossProcess: boolean
  /** A broker can restart under it ({@link TransportUnderTest.restartBroker}). */
  readonly reconnect: boolean
  /** Why a capability is missing, printed in the name of the skipped case. */
  readonly notApplicable?: { readonly crossProcess?: string; readonly reconnect?: string }
}

/**
 * One process of the implementation under test. Retries: 3 attempts, ~20 ms apart. Handlers are
 * registered with `on` before `start`; posts are accepted before `start` too (they wait).
 */
export interface TransportUnderTest<M> {
  readonly capabilities: TransportCapabilities
  on<T extends keyof M & string>(type: T, handler: TransportHandler<M[T]>): void
  /** Starts running handlers. */
  start(): Promise<void>
  /** Resolves once the message is durably accepted (or refused as a duplicate). */
  post<T extends keyof M & string>(type: T, payload: M[T], options?: TransportPostOptions): Promise<PostOutcome>
  /** Resolves once the delayed message is durably accepted. It must never start before `delayMs`. */
  postDelayed<T extends keyof M & string>(
    type: T,
    payload: M[T],
    delayMs: number,
    options?: TransportPostOptions,
  ): Promise<void>
  /** Resolves once nothing posted so far waits, is delayed or runs — in any process of the group. */
  drain(): Promise<void>
  /**
   * Stops. `finish: true` (the default) lets what runs finish; `false` stops at once and hands
   * whatever is unfinished back (to the durable state, for the next process).
   */
  stop(options?: { readonly finish?: boolean }): Promise<void>
  /** Dies at once (kill -9): no handler starts or finishes here again, nothing is handed back. */
  kill(): Promise<void>
  deadLetterCount(): Promise<number>
  /** Replays every dead letter; resolves with how many. */
  replayDeadLetters(): Promise<number>
  /** A new process on the same durable state, not started (call it once this one stopped or died). */
  restart(): Promise<TransportUnderTest<M>>
  /** Another live process of the same consumer group, not started (`capabilities.crossProcess`). */
  peer?(): Promise<TransportUnderTest<M>>
  /**
   * Restarts the broker this process is connected to (`capabilities.reconnect`); resolves once it is
   * back and — unless `reconnected: false` — this process is connected to it again.
   */
  restartBroker?(options?: { readonly reconnected?: boolean }): Promise<void>
  /** Ends the process whatever its state, and frees what it holds (the suite's cleanup). */
  dispose(): Promise<void>
}

/** An implementation: what it can do, and how a fresh one is opened. */
export interface TransportFactory<M> {
  /** As every process it opens reports them (the suite marks the cases it cannot run before any runs). */
  readonly capabilities: TransportCapabilities
  /** Opens the first process of a fresh, empty durable state (a new journal, a new loop name). */
  open(): Promise<TransportUnderTest<M>>
}
