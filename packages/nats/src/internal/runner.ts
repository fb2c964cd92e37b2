/**
 * The consuming side of a distributed loop in one process: for each partition it owns (see
 * `ownership.ts`), a consumer of its own takes up to `maxAckPending` of the partition's messages at
 * once, in batches, and re-admits each into the local loop (`loop.readmit`, so its trace, hops and
 * idempotency key continue and a redelivery takes its key over) — which runs one message of a key at
 * a time, in stream order, and keeps a failed one's retries on its key. Each outcome settles its
 * message with the server: acknowledged once its follow-ups (and, for a dead letter, the letter) are
 * stored, and only while both its lease and its partition's ownership hold.
 *
 * When the partition goes to another owner, what this process holds of it is dropped (a graceful
 * handover first lets it end); the new owner's consumer gets what was not acknowledged, at once and in
 * stream order, and a takeover from a dead owner counts those deliveries (`crash-counts.ts`), so
 * `maxDeliveries` still stops a message that keeps killing its process.
 *
 * @module
 */
import type { MessageMap, SnapshotMessage } from '@flowing/core'
import type { JsMsg } from '@nats-io/jetstream'
import { DeliveryError } from '../errors.js'
import { Admitter } from './admitter.js'
import { decode, type Wire } from './codec.js'
import type { Delivery } from './deliveries.js'
import type { OwnershipHandlers } from './ownership.js'
import { consumePartition, type PullHost, pullPartition, remakeConsumer } from './pulling.js'
import { RecentSet } from './recent-set.js'
import {
  newCounters,
  newOwned,
  type Owned,
  RECENT_ACKS,
  type RunnerCounters,
  type RunnerParts,
} from './runner-parts.js'
import { Settler } from './settler.js'
import { AUDIT_MS, audit, type SweepHost, sweepAfterReconnection } from './sweeps.js'
import { every, pause } from './timers.js'

/** Consumes the partitions this process owns and settles what it took. */
export class Runner<M extends MessageMap> implements OwnershipHandlers {
  readonly #p: RunnerParts<M>
  readonly #owned = new Map<number, Owned>()
  // Per partition, the stream sequences of the latest messages finished here (see `#done`).
  readonly #finished = new Map<number, RecentSet>()
  readonly #admitter: Admitter<M>
  #pulling = false
  readonly #settler: Settler
  readonly #sweeps: SweepHost
  readonly #pullHost: PullHost
  #stopAudits: (() => void) | undefined
  readonly counters: RunnerCounters = newCounters()

  constructor(parts: RunnerParts<M>) {
    this.#p = parts
    this.#settler = new Settler(
      { ...parts, acked: (d) => this.#acked(d), finished: (d) => this.#done(d) },
      this.counters,
    )
    this.#pullHost = { ...parts, receive: (jm, o) => this.#receive(jm, o) }
    this.#sweeps = {
      ...parts,
      counters: this.counters,
      owns: (o) => this.#owned.get(o.p) === o,
      startOver: (o) => this.#startOver(o),
    }
    this.#admitter = new Admitter(parts, this.counters, this.#settler)
  }

  /** Lets partitions gained from now on be consumed, and audits the owned ones every few seconds. */
  start(): void {
    this.#pulling = true
    this.#stopAudits ??= every(this.#p.clock, AUDIT_MS, () => {
      for (const o of this.#owned.values()) void audit(o, this.#sweeps)
    })
  }

  /** Stops consuming every partition (what is held runs on until the local loop stops). */
  async stopPulling(): Promise<void> {
    this.#pulling = false
    this.#stopAudits?.()
    for (const o of this.#owned.values()) this.#stopConsuming(o)
  }

  /** Waits for the consuming loops to end (after {@link Runner.stopPulling}). */
  async ended(): Promise<void> {
    await Promise.allSettled([...this.#owned.values()].map((o) => o.loop))
  }

  /** Partitions consumed now. */
  get partitions(): number {
    return this.#owned.size
  }

  /**
   * Gives up every delivery still held (after the local loop stopped), each handed back after what it
   * still had to wait; returns how many.
   */
  handBack(unfinished: readonly SnapshotMessage[]): number {
    return this.#settler.handBack(unfinished)
  }

  /** Stores the waits of what {@link Runner.handBack} handed back, for the partitions' next owners. */
  recordHandBacks(): Promise<void> {
    return this.#settler.recordHandBacks()
  }

  /**
   * The connection is back: the acknowledgements held while it was down go, if their leases hold, and
   * each owned partition is swept of what its consumer saw acknowledged (a server that crashed can
   * come back holding such messages).
   */
  reconnected(): void {
    this.#settler.reconnected()
    for (const o of this.#owned.values()) sweepAfterReconnection(o, this.#sweeps)
  }

  /** Ownership gained: replaces the partition's consumer with its own and starts consuming. */
  async gained(p: number, token: number, takenOver: boolean): Promise<void> {
    if (this.#owned.has(p)) await this.lost(p, false) // an ownership voided while it was taken up
    const { jsm, topology, handovers, maxAckPending } = this.#p
    const retired = await topology.own(jsm, p, token, maxAckPending)
    const past = await handovers.gained(p, takenOver ? retired : [])
    const o = newOwned(p, token, past, await consumePartition(this.#p, p, token), this.#pulling)
    this.#owned.set(p, o)
    o.loop = pullPartition(o, this.#pullHost)
  }

  /**
   * A held message's lease lapsed (a freeze, a blocked event loop): the server hands it out again, and
   * what this process holds behind it on its keys must not run first. So the partition starts over:
   * everything held of it is dropped, and its consumer made afresh hands out, in stream order, all
   * that was not acknowledged.
   */
  leaseLost(d: Delivery): void {
    const o = this.#owned.get(d.partition)
    if (o !== undefined && o.token === d.token) this.#startOver(o)
  }

  // Drops everything held of the partition and remakes its consumer, which hands out, in stream order,
  // all that was not acknowledged.
  #startOver(o: Owned): void {
    if (o.restarting) return
    o.restarting = true
    this.counters.startedOver++
    this.#stopConsuming(o)
    this.#settler.flushAcks() // what ended here goes out before the rest is dropped
    for (const held of [...o.held]) this.#drop(held)
    void this.#restart(o)
  }

  /**
   * Whether the handler of `d` may start now: its lease and its partition's ownership still hold. A
   * process thawed after a freeze may fire a retry's timer before its heartbeat has seen the lapse;
   * such an attempt must not start — the message is another process's to run. When the answer is no,
   * `d` is already given up here (its local message cancelled, never acked).
   */
  mayStart(d: Delivery): boolean {
    if (!d.lost && this.#settler.valid(d)) return true
    // A lapsed lease has started its partition over (`leaseLost`), dropping `d`; a lost ownership
    // drops it here, and the next look of the ownership gives the partition up.
    if (!d.lost) this.#drop(d)
    return false
  }

  // Remakes the partition's consumer (the server may be away a while: tries until it answers or the
  // partition is lost), then consumes again.
  async #restart(o: Owned): Promise<void> {
    await o.loop
    await remakeConsumer(o, this.#pullHost, () => this.#owned.get(o.p) === o)
    o.restarting = false
    if (this.#owned.get(o.p) !== o) return // lost meanwhile
    o.pulling = this.#pulling
    o.loop = pullPartition(o, this.#pullHost)
  }

  /**
   * Ownership lost: stops consuming; a graceful handover drops what has not started and lets what
   * runs end first (bounded), then whatever is still held is dropped here — never acknowledged — for
   * the next owner to run.
   */
  async lost(p: number, graceful: boolean): Promise<void> {
    const o = this.#owned.get(p)
    if (o === undefined) return
    this.#stopConsuming(o)
    this.#settler.flushAcks() // what ended here goes out before anything is dropped
    if (graceful) {
      // What has not started is simply not run here; what runs may end and be acknowledged first.
      for (const d of [...o.held]) if (!d.started) this.#drop(d)
      await this.#drained(o)
    }
    this.#owned.delete(p)
    this.#settler.flushAcks()
    for (const d of [...o.held]) this.#drop(d)
  }

  #stopConsuming(o: Owned): void {
    o.pulling = false
    o.iterator.stop()
  }

  async #drained(o: Owned): Promise<void> {
    const until = this.#p.clock.now() + this.#p.handoverMs
    while (o.held.size > 0 && this.#p.clock.now() < until) await pause(this.#p.clock, 10)
  }

  // Not this process's any more: cancelled locally (a running handler's signal aborts), never acked.
  #drop(d: Delivery): void {
    d.lost = true
    // Forgotten first: the cancel must not write its idempotency key as ended in the shared ledger —
    // the next owner runs the message.
    this.#settler.forget(d)
    if (d.localId !== undefined && this.#p.deliveries.drop(d.localId) === d) this.#p.local.cancel(d.localId)
    this.counters.fenced++
    d.release()
  }

  // Synchronous unless a redelivery's commit point must be read first (the pull loop awaits only then).
  #receive(jm: JsMsg, o: Owned): Promise<void> | undefined {
    this.counters.received++
    const info = jm.info // parsed from the reply subject at every read
    // The consumer numbers its deliveries: one missed (lost as its server went down) or repeated (a
    // server that came back with an older state) starts the partition over, before anything after it runs.
    if (info.deliverySequence !== o.delivered + 1) {
      this.#startOver(o)
      return
    }
    o.delivered = info.deliverySequence
    const wire = this.#decode(jm)
    if (wire === undefined || !this.#runsHere(jm, o)) return
    const count = info.deliveryCount + (o.past.crashes.get(jm.seq) ?? 0)
    if (count > this.#p.maxDeliveries) return this.#settler.deadLetterUnfinished(jm, wire, count)
    if (count === 1) {
      this.#admitter.admit(jm, wire, o, undefined)
      return
    }
    this.counters.redelivered++
    return this.#settler.checkpointOf(wire).then((checkpoint) => this.#admitter.admit(jm, wire, o, checkpoint))
  }

  // The message `jm` carries; another publisher's message is acknowledged (a terminated one would stay
  // in the work-queue stream for ever) and reported.
  #decode(jm: JsMsg): Wire | undefined {
    try {
      return decode(jm, this.#p.clock)
    } catch (error) {
      this.counters.undecodable++
      this.#p.report(new DeliveryError(`${jm.subject}#${jm.seq}`, 'not a Flowing message', 'dropped', error))
      jm.ack()
      return undefined
    }
  }

  // Whether `jm` is this process's to run now, under partition `o`.
  #runsHere(jm: JsMsg, o: Owned): boolean {
    const now = this.#p.clock.now()
    // Just after a gap (a freeze, a blocked event loop) leases may have lapsed unnoticed: look first —
    // a lapse starts the partition over, and this delivery is then not to be run.
    if (this.#p.deliveries.suspect(now)) this.#p.deliveries.sweep(now)
    if (!o.pulling) return false
    if (!this.#p.holds(o.p, o.token)) {
      this.counters.fenced++ // buffered before the partition went elsewhere (a freeze): not ours to run
      return false
    }
    if (this.#finished.get(o.p)?.has(jm.seq) !== true) return true
    // Finished here already, its ack lost on the way, sent to a consumer remade meanwhile, or withheld
    // because its lease had lapsed: the server hands it out again. It is this process's now, and its
    // work is done: acknowledged, not run twice.
    jm.ack()
    this.counters.reAcked++
    return false
  }

  // `d` finished here (its outcome settled; its ack went out or was withheld): remembered per partition,
  // whatever the ownership's token, so a redelivery of it to this process is acknowledged, not run.
  #done(d: Delivery): void {
    let finished = this.#finished.get(d.partition)
    if (finished === undefined) {
      finished = new RecentSet(RECENT_ACKS)
      this.#finished.set(d.partition, finished)
    }
    finished.add(d.jm.seq)
  }

  // An acknowledgement went out: kept in its partition's ring (see `sweeps.ts`).
  #acked(d: Delivery): void {
    const o = this.#owned.get(d.partition)
    if (o === undefined || o.token !== d.token) return
    o.recentAcks[o.recentAt] = d.jm
    o.recentAt = (o.recentAt + 1) % RECENT_ACKS
  }
}
