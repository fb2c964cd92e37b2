/**
 * The errors of `@flowing/nats`. Overload and lifecycle refusals are core's own (`QueueFullError`,
 * `LoopStoppedError`); these are the transport's and its idempotency ledger's.
 *
 * @module
 */
import { FlowingError } from '@flowing/errors'

/**
 * The streams already exist with a shape this process cannot share: another partition count, or
 * another subject layout. Per-key order would break if processes disagreed on P, so nothing starts.
 *
 * @group Errors
 */
export class TopologyError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_NATS_TOPOLOGY'
  /** The stream in question. */
  readonly stream: string

  /**
   * @param stream - the stream's name
   * @param problem - what does not match, in words
   */
  constructor(stream: string, problem: string) {
    super('ERR_FLOWING_NATS_TOPOLOGY', `Stream ${stream} cannot be shared: ${problem}`)
    this.stream = stream
  }
}

/**
 * A publish to JetStream failed for a reason other than a full stream (no connection, a timeout…).
 *
 * @group Errors
 */
export class PublishError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_NATS_PUBLISH'
  /** The subject it was published to. */
  readonly subject: string

  /**
   * @param subject - the subject
   * @param cause - what the client threw
   */
  constructor(subject: string, cause: unknown) {
    super(
      'ERR_FLOWING_NATS_PUBLISH',
      `Publishing to ${subject} failed: ${(cause as Error)?.message ?? String(cause)}`,
      {
        cause,
      },
    )
    this.subject = subject
  }
}

/**
 * This process could not take a delivered message, reported through `onError`: no handler for its
 * type here, or its idempotency key still held by a stale copy — handed back, and after
 * `maxDeliveries` deliveries without an outcome dead-lettered; or not a Flowing message at all (another
 * publisher's) — acknowledged and dropped, so the partition moves on.
 *
 * @group Errors
 */
export class DeliveryError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_NATS_DELIVERY'
  /** The message's id. */
  readonly messageId: string
  /** Its type. */
  readonly messageType: string

  /**
   * @param messageId - the message's id
   * @param messageType - its type
   * @param outcome - what became of it
   * @param cause - why it could not be taken
   */
  constructor(messageId: string, messageType: string, outcome: 'handed back' | 'dropped', cause: unknown) {
    const why = (cause as Error)?.message ?? String(cause)
    super('ERR_FLOWING_NATS_DELIVERY', `Message ${messageId} (${messageType}) was ${outcome}: ${why}`, { cause })
    this.messageId = messageId
    this.messageType = messageType
  }
}

/**
 * A write of {@link KvIdempotencyStore} found the key rewritten by someone else since this store last
 * wrote it: another process took the key over (a redelivery of its message after this one was
 * presumed dead). The store has forgotten the key; nothing was written.
 *
 * @example
 * ```
 * Idempotency key `order-42` in NATS KV bucket `orders-ledger` was taken over by another process (the revision this store wrote, 7, is no longer the latest): this write is fenced off
 * ```
 *
 * @group Errors
 */
export class LedgerFencedError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_LEDGER_FENCED'
  /** The idempotency key whose write was refused. */
  readonly key: string
  /** The KV bucket. */
  readonly bucket: string

  /**
   * @param key - the idempotency key
   * @param bucket - the KV bucket
   * @param revision - the revision this store last wrote, or undefined when it never held the key
   * @param options - `cause`: the JetStream error of the refused compare-and-set
   */
  constructor(key: string, bucket: string, revision: number | undefined, options?: ErrorOptions) {
    const why =
      revision === undefined
        ? 'this store does not hold it (never claimed, already finished, or forgotten)'
        : `was taken over by another process (the revision this store wrote, ${revision}, is no longer the latest)`
    super(
      'ERR_FLOWING_LEDGER_FENCED',
      `Idempotency key \`${key}\` in NATS KV bucket \`${bucket}\` ${why}: this write is fenced off`,
      options,
    )
    this.key = key
    this.bucket = bucket
  }
}

/**
 * {@link KvIdempotencyStore.claim} lost the compare-and-set race for a key {@link CLAIM_ATTEMPTS}
 * times in a row (others kept rewriting it): the claim is given up rather than spun on.
 *
 * @group Errors
 */
export class LedgerContendedError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_LEDGER_CONTENDED'
  /** The idempotency key. */
  readonly key: string
  /** The KV bucket. */
  readonly bucket: string
  /** The races it lost in a row. */
  readonly attempts: number

  /**
   * @param key - the idempotency key
   * @param bucket - the KV bucket
   * @param attempts - the races it lost in a row ({@link CLAIM_ATTEMPTS})
   */
  constructor(key: string, bucket: string, attempts: number) {
    super(
      'ERR_FLOWING_LEDGER_CONTENDED',
      `Claiming idempotency key \`${key}\` in NATS KV bucket \`${bucket}\` lost the compare-and-set race ${attempts} times in a row: others keep rewriting it`,
    )
    this.key = key
    this.bucket = bucket
    this.attempts = attempts
  }
}

/**
 * A value in the ledger's KV bucket is not a ledger entry (not the JSON the store writes): something
 * else wrote the key. The call that read it fails with this error; nothing is written.
 *
 * @example
 * ```
 * NATS KV bucket `orders-keys` holds no ledger entry under `order-42`: the value is not JSON (Unexpected token …)
 * ```
 *
 * @group Errors
 */
export class LedgerEntryError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_LEDGER_ENTRY'
  /** The KV key (encoded as the store writes it). */
  readonly key: string
  /** The KV bucket. */
  readonly bucket: string

  /**
   * @param key - the KV key
   * @param bucket - the KV bucket
   * @param cause - what decoding it threw
   */
  constructor(key: string, bucket: string, cause: unknown) {
    const why = (cause as Error)?.message ?? String(cause)
    super(
      'ERR_FLOWING_LEDGER_ENTRY',
      `NATS KV bucket \`${bucket}\` holds no ledger entry under \`${key}\`: the value is not JSON (${why})`,
      { cause },
    )
    this.key = key
    this.bucket = bucket
  }
}

/**
 * The reason a message was dead-lettered without running again: delivered `maxDeliveries` times
 * without an outcome — it kills or freezes every process that takes it, or no process has a handler
 * for its type. Its letter's `error.name` is `DeliveryLimitError`.
 *
 * @group Errors
 */
export class DeliveryLimitError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_NATS_DELIVERY_LIMIT'
  /** The message's id. */
  readonly messageId: string
  /** The deliveries it had. */
  readonly deliveries: number

  /**
   * @param messageId - the message's id
   * @param deliveries - the deliveries it had
   * @param maxDeliveries - the loop's `maxDeliveries`
   */
  constructor(messageId: string, deliveries: number, maxDeliveries: number) {
    super(
      'ERR_FLOWING_NATS_DELIVERY_LIMIT',
      `delivered ${deliveries} times without an outcome (maxDeliveries ${maxDeliveries})`,
    )
    this.messageId = messageId
    this.deliveries = deliveries
  }
}
