/**
 * The errors of `@flowing/nats`. Overload and lifecycle refusals are core's own (`QueueFullError`,
 * `LoopStoppedError`); these are the transport's.
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
