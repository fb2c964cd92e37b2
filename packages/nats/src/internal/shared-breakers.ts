/**
 * Circuit breakers shared by the processes of one loop: when a breaker opens in one process — its own
 * failures, or a probe that failed — it writes the route's state to the KV bucket `<name>-circuits`,
 * and every other process, watching the bucket, opens its breaker of the route for the rest of the
 * same cooldown (by wall-clock time) without waiting for failures of its own. A breaker that closes
 * after its probes succeeded closes the others the same way. So three processes do not hit a failing
 * downstream three times as hard: past the first process's trip, each sends only its probes.
 *
 * Forced changes (reason `forced`: what this module itself applied) are not written back, so a change
 * goes around once. The staleness is the watch's: a change reaches the other processes within one
 * delivery from the server (milliseconds); a process cut off from the server trips on its own counts.
 *
 * @module
 */
import { type CircuitChange, type Clock, type Loop, type MessageMap, type MessageType, wallNow } from '@flowing/core'
import { type KV, type KvEntry, Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { encodeKey } from './kv-keys.js'

/** A route's breaker as one process last wrote it. */
interface SharedCircuit {
  readonly member: string
  readonly type: string
  readonly routeKey?: string
  readonly open: boolean
  /** Until when it is open (epoch ms), for an open one. */
  readonly untilEpochMs?: number
}

/** Shares one process's breakers with the others of its loop. */
export class SharedBreakers<M extends MessageMap> {
  readonly #kv: KV
  readonly #local: Loop<M>
  readonly #member: string
  readonly #clock: Clock
  readonly #report: (error: unknown) => void
  #watch: { stop(): void } | undefined
  readonly #off: () => void

  /**
   * @param member - this process's member id (its own writes are no news)
   */
  constructor(kv: KV, local: Loop<M>, member: string, clock: Clock, report: (error: unknown) => void) {
    this.#kv = kv
    this.#local = local
    this.#member = member
    this.#clock = clock
    this.#report = report
    const listener = (change: CircuitChange) => this.#changed(change)
    local.events.on('circuit', listener)
    this.#off = () => local.events.off('circuit', listener)
  }

  /** Opens (or creates) the loop's breaker bucket. */
  static bucket(nc: NatsConnection, name: string, replicas: number): Promise<KV> {
    return new Kvm(nc).create(`${name}-circuits`, { history: 1, replicas })
  }

  /** Follows the others' breakers: those open now first, then every change. */
  async start(): Promise<void> {
    const watch = await this.#kv.watch()
    this.#watch = watch
    void (async () => {
      for await (const e of watch) this.#follow(e)
    })().catch(this.#report)
  }

  /** Stops following and sharing. */
  stop(): void {
    this.#off()
    this.#watch?.stop()
  }

  #changed(change: CircuitChange): void {
    if (change.reason === 'forced' || change.state === 'half-open') return
    const routeKey = change.route === change.type ? undefined : change.route.slice(change.type.length + 1)
    const open = change.state === 'open'
    const shared: SharedCircuit = {
      member: this.#member,
      type: change.type,
      ...(routeKey === undefined ? {} : { routeKey }),
      open,
      ...(open ? { untilEpochMs: wallNow(this.#clock) + (change.cooldownMs ?? 0) } : {}),
    }
    this.#kv.put(encodeKey(change.route), JSON.stringify(shared)).catch(this.#report)
  }

  #follow(e: KvEntry): void {
    if (e.operation !== 'PUT') return
    let c: SharedCircuit
    try {
      c = e.json<SharedCircuit>()
    } catch {
      return // not ours
    }
    if (c.member === this.#member || typeof c.type !== 'string') return
    const options = c.routeKey === undefined ? {} : { routeKey: c.routeKey }
    try {
      const type = c.type as MessageType<M>
      if (!c.open) this.#local.controls.closeCircuit(type, options)
      else {
        const cooldownMs = (c.untilEpochMs ?? 0) - wallNow(this.#clock)
        if (cooldownMs > 0) this.#local.controls.openCircuit(type, { ...options, cooldownMs })
      }
    } catch {
      // A type this process does not handle, or handles without a breaker: nothing to follow.
    }
  }
}
