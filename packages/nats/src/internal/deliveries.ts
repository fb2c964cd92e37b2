/**
 * The messages this process holds from the server, each with its lease: the time until which this
 * process may still acknowledge it. NATS does not fence acknowledgements — it matches an ack by stream
 * sequence only, so a process frozen past `ack_wait` that acks its stale copy would free the partition
 * while another process runs the redelivered one. So the lease is local and conservative: the server's
 * `ack_wait` less a margin, on the loop's clock (monotonic), extended by `working()` while the message runs,
 * backs off or is held, and only while the connection is up. Once it has lapsed the process refuses
 * to ack: the message is the server's again.
 *
 * @module
 */
import type { Clock } from '@flowing/core'
import type { JsMsg } from '@nats-io/jetstream'
import type { Wire } from './codec.js'
import { every } from './timers.js'

// The gap watch: its period, and how long deliveries stay suspect after a gap (what the client had
// buffered comes out within a few turns of the thaw).
const TICK_MS = 100
const SUSPECT_MS = 1000

/** One message held from the server. */
export interface Delivery {
  /** The server's message. */
  readonly jm: JsMsg
  /** What it carries. */
  readonly wire: Wire
  /** Its partition. */
  readonly partition: number
  /** The ownership of the partition it came under (the owner key's revision). */
  readonly token: number
  /** Its message's id in the local loop, once admitted there. */
  localId?: string
  /** Its handler started (in this process). */
  started?: boolean
  /** When the lease was last extended (monotonic ms). */
  extendedAt: number
  /** The lease lapsed: this process must not acknowledge it. */
  lost: boolean
  /** Follow-ups its handler posted that are not stored yet: it is acked once they are. */
  readonly followUps: Promise<unknown>[]
  /** The attempt whose follow-ups `followUps` counts (a retried handler posts them again, deduped). */
  followUpAttempt: number
  /** How many follow-ups that attempt posted (their ids are `<id>>n`). */
  followUpCount: number
  /** Lets the delivery go from its partition's held set (when it ends or is given up). */
  readonly release: () => void
}

/** The held messages by local message id, and the heartbeat that extends their leases. */
export class Deliveries {
  readonly #clock: Clock
  readonly #leaseMs: number
  readonly #byId = new Map<string, Delivery>()
  // Dropped while their handlers ran: their outcomes still tell whether they finished here.
  readonly #dropped = new Map<string, Delivery>()
  readonly #onLost: (d: Delivery) => void
  // Stop the heartbeat and the gap watch, while they run.
  #stopHeartbeat: (() => void) | undefined
  #stopWatch: (() => void) | undefined
  // The last turn of the ticker, and until when deliveries are suspect after a gap (see `suspect`).
  #lastTick: number
  #suspectUntil = 0
  /** Whether leases may be extended now (the connection is up). */
  connected = true
  /** Leases that lapsed. */
  lost = 0

  /**
   * @param clock - the loop's clock: the leases' time and the timers'
   * @param leaseMs - how long a lease lasts without extension
   * @param onLost - told of each delivery whose lease lapsed (once)
   */
  constructor(clock: Clock, leaseMs: number, onLost: (d: Delivery) => void) {
    this.#clock = clock
    this.#leaseMs = leaseMs
    this.#onLost = onLost
    this.#lastTick = clock.now()
  }

  /** The clock's time now (monotonic ms): what leases are measured in. */
  now(): number {
    return this.#clock.now()
  }

  /** Starts the heartbeat (a few times per lease) and the gap watch. */
  start(): void {
    const clock = this.#clock
    this.#stopHeartbeat ??= every(clock, Math.max(50, this.#leaseMs / 4), () => this.sweep(clock.now()))
    this.#lastTick = clock.now()
    this.#stopWatch ??= every(clock, TICK_MS, () => this.suspect(clock.now()))
  }

  /** Stops them. */
  stop(): void {
    this.#stopHeartbeat?.()
    this.#stopWatch?.()
    this.#stopHeartbeat = undefined
    this.#stopWatch = undefined
  }

  /**
   * Whether a delivery taken now may be stale: the process was frozen or its event loop blocked for
   * a good part of a lease lately (the ticker missed its turns). A message the client had buffered
   * before such a gap may have been handed to another process meanwhile, and its lease here would
   * start only now; the caller checks with the server before running it.
   */
  suspect(now: number): boolean {
    if (now - this.#lastTick > Math.max(4 * TICK_MS, this.#leaseMs / 2)) this.#suspectUntil = now + SUSPECT_MS
    this.#lastTick = now
    return now < this.#suspectUntil
  }

  /** Deliveries held. */
  get size(): number {
    return this.#byId.size
  }

  /** Every delivery held, by local message id. */
  entries(): IterableIterator<[string, Delivery]> {
    return this.#byId.entries()
  }

  /** Holds `d` under the local id of its message. */
  add(localId: string, d: Delivery): void {
    this.#byId.set(localId, d)
  }

  /** The delivery of a local message, if this process holds it. */
  get(localId: string): Delivery | undefined {
    return this.#byId.get(localId)
  }

  /** The delivery of a local message whose handler starts now, marked so (if this process holds it). */
  starting(localId: string): Delivery | undefined {
    const d = this.#byId.get(localId)
    if (d !== undefined) d.started = true
    return d
  }

  /**
   * Lets go of a delivery this process no longer holds (its partition started over or went elsewhere);
   * one whose handler had started is remembered until its local outcome (see {@link Deliveries.takeDropped}).
   * Returns it, if it was held.
   */
  drop(localId: string): Delivery | undefined {
    const d = this.take(localId)
    if (d?.started === true) this.#dropped.set(localId, d)
    return d
  }

  /** The dropped delivery of a local message whose handler was running when it was dropped, if any. */
  takeDropped(localId: string): Delivery | undefined {
    if (this.#dropped.size === 0) return undefined
    const d = this.#dropped.get(localId)
    if (d !== undefined) this.#dropped.delete(localId)
    return d
  }

  /** Lets a delivery go; returns it, if it was held. */
  take(localId: string): Delivery | undefined {
    const d = this.#byId.get(localId)
    if (d !== undefined) this.#byId.delete(localId)
    return d
  }

  /**
   * Whether `d` may still be acknowledged at `now` (marks it lost, once, when not). A reading taken
   * right after a long freeze sees the lapse before anything is sent.
   */
  valid(d: Delivery, now: number): boolean {
    if (d.lost) return false
    if (now - d.extendedAt < this.#leaseMs) return true
    this.#lose(d)
    return false
  }

  /** Extends every lease that is a third gone, and gives up those that lapsed. */
  sweep(now: number): void {
    for (const d of this.#byId.values()) {
      if (!this.valid(d, now) || now - d.extendedAt < this.#leaseMs / 3 || !this.connected) continue
      d.jm.working()
      d.extendedAt = now
    }
  }

  #lose(d: Delivery): void {
    d.lost = true
    this.lost++
    this.#onLost(d)
  }
}

/**
 * Follows the connection: leases are extended only while it is up (a `working()` buffered while it is
 * down reaches the server too late to count); after a reconnect, `reconnected` runs.
 */
export async function followConnection(
  nc: { status(): AsyncIterable<{ type: string }> },
  deliveries: Deliveries,
  reconnected: () => void,
): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect') deliveries.connected = false
    else if (s.type === 'reconnect') {
      deliveries.connected = true
      reconnected()
    }
  }
}
