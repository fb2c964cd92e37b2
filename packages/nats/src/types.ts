/**
 * The result, report and figure types of a distributed loop (a leaf: the loop and its users import it).
 *
 * @module
 */
import type { AbortSignalLike, Message, MessageMap, MessageType, MetricsSnapshot } from '@flowing/core'

/**
 * `tryPost` on a distributed loop: stored, or refused with the error `post` would have thrown.
 *
 * @group NATS loop
 */
export type NatsPostResult<M extends MessageMap, T extends MessageType<M>> =
  | { readonly ok: true; readonly status: 'queued'; readonly message: Message<M, T> }
  | { readonly ok: false; readonly status: 'full' | 'shed' | 'reject' | 'duplicate' | 'stopped'; readonly error: Error }

/**
 * A distributed loop's figures: its local loop's, and the transport's.
 *
 * @group NATS loop
 */
export interface NatsMetrics {
  /** The local loop that runs this process's handlers. */
  readonly local: MetricsSnapshot
  /** Messages this process holds from the server now. */
  readonly held: number
  /** Partitions this process owns (consumes) now. */
  readonly partitions: number
  /** Messages published (posts, follow-ups, delayed ones moved, replays) and stored. */
  readonly published: number
  /** Publishes the server dropped as duplicates (a message id seen within its window). */
  readonly duplicates: number
  /** Publishes refused by a full stream. */
  readonly refused: number
  /** Deliveries received. */
  readonly received: number
  /** Deliveries acknowledged. */
  readonly acked: number
  /** Deliveries handed back (`nak`): on stop, or when they could not be admitted or settled. */
  readonly nakked: number
  /** Deliveries this process ended after their lease lapsed: it did not acknowledge them. */
  readonly fenced: number
  /** Leases that lapsed (a frozen process, a blocked event loop, a lost connection). */
  readonly leasesLost: number
  /** Deliveries that were redeliveries. */
  readonly redelivered: number
  /** Messages this process dead-lettered. */
  readonly deadLettered: number
  /** Deliveries skipped because their idempotency key was done. */
  readonly skipped: number
  /** Deliveries that were not Flowing messages (terminated). */
  readonly undecodable: number
  /**
   * Acknowledged messages removed from the work stream after a reconnection or a takeover: a server
   * that crashed can come back holding messages whose removal it had not written down yet.
   */
  readonly removedAcked: number
  /**
   * Times an owned partition started over: everything held of it dropped, its consumer made afresh
   * (a lapsed lease; deliveries lost or repeated by a server that crashed; a message a restarted
   * server kept although its idle consumer counts it acknowledged).
   */
  readonly startedOver: number
  /**
   * Acknowledgements sent again because the server had lost them (a crash, or a cluster node that led
   * a partition's consumer died), or had not applied them, or because they were withheld (a lapsed
   * lease) when the message finished here: a message handed again to the process that finished it is
   * acknowledged, not run twice.
   */
  readonly reAcked: number
  /** Delayed messages this process moved into their partitions when due. */
  readonly delayedMoved: number
  /** Messages acknowledged without running: their job key named another message, or none (cancelled). */
  readonly jobsSkipped: number
}

/**
 * Options of {@link NatsLoop.stop}.
 *
 * @group NATS loop
 */
export interface NatsStopOptions {
  /**
   * How long to let what this process holds run on (ms); then what is still running is aborted
   * (`ctx.signal`, late effects fenced) and everything unfinished is handed back to the server.
   * `0` hands back at once.
   * @defaultValue 10_000
   */
  readonly deadlineMs?: number
  /** Cuts the wait short when aborted, as the deadline does (a second SIGTERM, say). */
  readonly signal?: AbortSignalLike
}

/**
 * What `stop()` did.
 *
 * @group NATS loop
 */
export interface NatsStopReport {
  /** Messages this process held unfinished and handed back to the server (others run them). */
  readonly handedBack: number
}
